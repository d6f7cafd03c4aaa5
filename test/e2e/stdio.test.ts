/**
 * The built CLI over stdio, driven by the v2 SDK's Client as an MCP host would, once as a
 * 2025-11-25 client (`initialize`) and once pinned to 2026-07-28 (no handshake, `_meta` on
 * every request): each profile chosen through NOTIFY_CLIENT_PROFILES, a dry-run send on
 * every channel, a channel-shaped error, and nothing but JSON-RPC on stdout. Then raw
 * 2026-07-28 lines: one process answers requests with different clientInfo by each one's
 * profile.
 */
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import { afterAll, describe, expect, it } from 'vitest';
import { ChildStdioTransport, cliEnv, runCli, tempDataDir } from '../helpers/cli.js';
import { CHANNEL_FIELDS as FIELDS, CHANNEL_TOOLS, FIRST_EXAMPLES, VALID_EXAMPLES } from '../helpers/examples.js';
import { ERAS, eraClient, MODERN_VERSION, rawStdio } from '../helpers/mcp-cli.js';

type Call = { name: string; arguments: Record<string, unknown> };
type Args = Record<string, unknown>;

/** The same notification, shaped as a client of each profile sends it. */
const SHAPES: Record<string, { call: (a: Args) => Call; subjectPath: string }> = {
  flat: { call: (a) => ({ name: 'send_notification', arguments: a }), subjectPath: '/subject' },
  oneOf: { call: (a) => ({ name: 'send_notification', arguments: a }), subjectPath: '/subject' },
  nested: {
    call: (a) => ({
      name: 'send_notification',
      arguments: { notification: Object.fromEntries(['via', ...FIELDS[a.via as string]!].map((f) => [f, a[f] ?? null]).concat(Object.entries(a).filter(([k]) => !FIELDS[a.via as string]!.includes(k) && k !== 'via'))) },
    }),
    subjectPath: '/notification/subject',
  },
  'per-channel': {
    call: ({ via, ...rest }) => ({ name: `send_${via}`, arguments: rest }),
    subjectPath: '/subject',
  },
};

const dataDir = tempDataDir();
const env = cliEnv({
  NOTIFY_DATA_DIR: dataDir,
  NOTIFY_CLIENT_PROFILES: 'c-flat=flat,c-nested=nested,c-oneOf=oneOf,c-per-channel=per-channel',
  NOTIFY_DEFAULT_PROFILE: 'flat',
});

const transports: ChildStdioTransport[] = [];
/** tools/list as each era's client saw it, by `${era} ${profile}`. */
const listed = new Map<string, string>();
afterAll(async () => {
  await Promise.all(transports.map((t) => t.close()));
});

describe.each(ERAS.flatMap((era) => Object.keys(SHAPES).map((profile) => [era, profile] as const)))('stdio, %s client, profile %s', (era, profile) => {
  it('lists, sends on every channel, and answers a misplaced field by channel', async () => {
    const transport = new ChildStdioTransport([], env);
    transports.push(transport);
    const client = eraClient(`c-${profile}`, era);
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe(era);

    const { tools } = await client.listTools();
    listed.set(`${era} ${profile}`, JSON.stringify(tools));
    const expected = profile === 'per-channel' ? CHANNEL_TOOLS : ['send_notification'];
    expect(tools.map((t) => t.name)).toEqual([...expected, 'get_notification', 'edit_notification', 'retract_notification', 'show_banner', 'dismiss_banner', 'list_banners']);

    const shape = SHAPES[profile]!;
    for (const example of FIRST_EXAMPLES) {
      const via = example.via;
      const result = await client.callTool(shape.call({ ...example }));
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ via, status: 'dry_run', id: expect.stringMatching(/^ntf_/) });
      expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual(result.structuredContent);
    }

    const bad = await client.callTool(shape.call({ ...VALID_EXAMPLES.sms![0]!, subject: 'Outage' }));
    expect(bad.isError).toBe(true);
    expect((bad.structuredContent as { error: unknown }).error).toMatchObject({
      code: 'FIELD_NOT_ON_CHANNEL',
      path: shape.subjectPath,
      via: 'sms',
      // Per channel there is no via to set: the advice names the tool.
      message: expect.stringContaining(profile === 'per-channel' ? 'Drop subject, or call send_email:' : 'Drop subject, or set via to email:'),
    });

    // Banner tools under every profile; the strict (nested) shape sends every optional as null.
    const optional = profile === 'nested' ? { severity: null, expires_at: null, dedupe_key: null } : {};
    const shown = await client.callTool({ name: 'show_banner', arguments: { text: 'Deploy freeze', audience: 'admins', ...optional } });
    expect(shown.isError, JSON.stringify(shown)).toBeFalsy();
    expect(shown.structuredContent).toMatchObject({ status: 'active', banner_id: expect.stringMatching(/^bnr_/) });

    await transport.close();
    expect(transport.child.exitCode).toBe(0);
    expect(transport.stdoutLines.length).toBeGreaterThan(0);
    for (const line of transport.stdoutLines) expect(() => JSONRPCMessageSchema.parse(JSON.parse(line)), line).not.toThrow();
    for (const line of transport.stderr.trim().split('\n')) expect(() => JSON.parse(line), line).not.toThrow();
  });
});

describe('stdio, both eras', () => {
  it('offer the same tools, byte for byte, for each profile', () => {
    for (const profile of Object.keys(SHAPES)) {
      expect(listed.get(`modern ${profile}`), profile).toBe(listed.get(`legacy ${profile}`));
      expect(listed.get(`legacy ${profile}`), profile).toBeDefined();
    }
  });
});

async function rawSession(envVars: Record<string, string>) {
  const transport = new ChildStdioTransport([], envVars);
  transports.push(transport);
  return { transport, ...(await rawStdio(transport)) };
}

const modernMeta = (clientName?: string) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  ...(clientName === undefined ? {} : { 'io.modelcontextprotocol/clientInfo': { name: clientName, version: '1' } }),
});

describe('stdio, 2026-07-28 on the wire', () => {
  it('answers server/discover, then each request by the profile of its own clientInfo, with ttlMs and cacheScope', async () => {
    const s = await rawSession(env);
    const discover = await s.request('server/discover', { _meta: modernMeta('c-nested') });
    expect(discover.result.supportedVersions).toContain(MODERN_VERSION);
    expect(discover.result.capabilities.tools).toBeDefined();
    expect(discover.result._meta['io.modelcontextprotocol/serverInfo'].name).toBe('notify-mcp');

    const names = async (client?: string) => {
      const r = await s.request('tools/list', { _meta: modernMeta(client) });
      expect(r.result.ttlMs).toBeGreaterThan(0);
      // NOTIFY_CLIENT_PROFILES is set: the list depends on who asks, so it is not shareable.
      expect(r.result.cacheScope).toBe('private');
      return r.result.tools as { name: string; inputSchema: Record<string, any> }[];
    };
    const perChannel = await names('c-per-channel');
    const nested = await names('c-nested');
    const anonymous = await names();
    expect(perChannel.map((t) => t.name).slice(0, 3)).toEqual(['send_email', 'send_sms', 'send_slack']);
    expect(nested[0]!.inputSchema.properties).toHaveProperty('notification');
    expect(anonymous[0]!.inputSchema.properties).toHaveProperty('via'); // the default, flat
    // The same client again gets the same list: clientInfo is read per request, not kept.
    expect(await names('c-per-channel')).toEqual(perChannel);

    // A call is routed by its own clientInfo too: send_sms exists only under per-channel.
    const sms = { to: '+14155550123', body: 'per-request profile' };
    const asPerChannel = await s.request('tools/call', { name: 'send_sms', arguments: sms, _meta: modernMeta('c-per-channel') });
    expect(asPerChannel.result.structuredContent).toMatchObject({ via: 'sms', status: 'dry_run' });
    const asFlat = await s.request('tools/call', { name: 'send_sms', arguments: sms, _meta: modernMeta('c-flat') });
    expect(asFlat.error.code).toBe(-32602);
    // Our text carries no error-code prefix: a client adds its own ("MCP error -32602: …") once.
    expect(asFlat.error.message).toMatch(/^Unknown tool "send_sms"\. Available tools: /);

    // A request without the envelope on a 2026-07-28 connection is refused, and the process keeps serving.
    const bare = await s.request('tools/list');
    expect(bare.error).toBeDefined();
    expect((await names('c-flat'))[0]!.name).toBe('send_notification');

    await s.transport.close();
    expect(s.transport.child.exitCode).toBe(0);
    for (const line of s.transport.stdoutLines) expect(() => JSONRPCMessageSchema.parse(JSON.parse(line)), line).not.toThrow();
  });
});

describe('outbox', () => {
  it('prints the delivery records of those sends, the email as a complete MIME message', async () => {
    const { code, stdout } = await runCli(['outbox', '--limit', '100'], env);
    expect(code).toBe(0);
    const records = stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(records.length).toBeGreaterThanOrEqual(24);
    const mail = records.find((r) => r.via === 'email');
    expect(mail.status).toBe('dry_run');
    expect(mail.payload.raw).toMatch(/^X-Notification-ID: ntf_/im);
    expect(mail.payload.raw).toContain('multipart/alternative');
    expect(mail.payload.raw).toContain(`Message-ID: <${mail.id}@`);
    expect(records.filter((r) => r.via === 'sms').map((r) => r.payload)).toContainEqual({ To: '+14155550123', Body: 'Server down' });
    expect(records.map((r) => r.client)).toEqual(expect.arrayContaining(['c-flat', 'c-nested']));
  });
});
