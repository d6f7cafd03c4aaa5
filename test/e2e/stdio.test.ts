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
      arguments: {
        notification: Object.fromEntries(
          ['via', ...FIELDS[a.via as string]!]
            .map((f) => [f, a[f] ?? null])
            .concat(Object.entries(a).filter(([k]) => !FIELDS[a.via as string]!.includes(k) && k !== 'via')),
        ),
      },
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

describe.each(ERAS.flatMap((era) => Object.keys(SHAPES).map((profile) => [era, profile] as const)))(
  'stdio, %s client, profile %s',
  (era, profile) => {
    it('lists, sends on every channel, and answers a misplaced field by channel', async () => {
      const transport = new ChildStdioTransport([], env);
      transports.push(transport);
      const client = eraClient(`c-${profile}`, era);
      await client.connect(transport);
      expect(client.getProtocolEra()).toBe(era);

      const { tools } = await client.listTools();
      listed.set(`${era} ${profile}`, JSON.stringify(tools));
      const expected = profile === 'per-channel' ? CHANNEL_TOOLS : ['send_notification'];
      expect(tools.map((t) => t.name)).toEqual([
        ...expected,
        'get_notification',
        'edit_notification',
        'retract_notification',
        'show_banner',
        'dismiss_banner',
        'list_banners',
      ]);

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
        message: expect.stringContaining(
          profile === 'per-channel' ? 'Drop subject, or call send_email:' : 'Drop subject, or set via to email:',
        ),
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
  },
);

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
    // Through mcp-remote the name carries the bridge; an SDK sends the user's label as typed.
    expect(await names('c-nested (via mcp-remote 0.15.1)')).toEqual(nested);
    expect(await names('C-Per-Channel')).toEqual(perChannel);

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

describe('stdio, the opening requests answered while the server loads (the early reader)', () => {
  /** Writes `lines` the moment the CLI is spawned, before anything of it has loaded; answers by id. */
  async function spawnedWith(lines: object[]) {
    const transport = new ChildStdioTransport([], env);
    transports.push(transport);
    const byId = new Map<unknown, Record<string, any>[]>();
    transport.onmessage = (m) => {
      const id = (m as { id?: unknown }).id;
      if (id !== undefined) byId.set(id, [...(byId.get(id) ?? []), m as Record<string, any>]);
    };
    for (const l of lines) void transport.send({ jsonrpc: '2.0', ...l } as never);
    await transport.start();
    const answered = async (id: unknown) => {
      while (!byId.has(id)) await new Promise((r) => setTimeout(r, 10));
      return byId.get(id)![0]!;
    };
    return { transport, byId, answered };
  }

  it("server/discover then initialize (AI SDK 7's fallback): both answered once, and the handshake's clientInfo still picks the profile", async () => {
    const s = await spawnedWith([
      { id: 1, method: 'server/discover', params: { _meta: modernMeta('c-nested') } },
      {
        id: 2,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c-nested (via mcp-remote 0.15.1)', version: '1' } },
      },
    ]);
    expect((await s.answered(1)).result.supportedVersions).toContain(MODERN_VERSION);
    expect((await s.answered(2)).result.protocolVersion).toBe('2025-11-25');
    void s.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    void s.transport.send({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} });
    const list = await s.answered(3);
    expect(list.result.tools[0].inputSchema.properties).toHaveProperty('notification');
    await s.transport.close();
    expect([...s.byId.values()].map((answers) => answers.length)).toEqual([1, 1, 1]);
    // The server's own answers to the replayed requests matched the early ones.
    expect(s.transport.stderr).not.toContain('early answer differed');
    expect(s.transport.child.exitCode).toBe(0);
  });

  it('an older protocol version and a 2026-07-28 connection are answered alike', async () => {
    const legacy = await spawnedWith([
      {
        id: 'i',
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c-per-channel', version: '1' } },
      },
    ]);
    expect((await legacy.answered('i')).result.protocolVersion).toBe('2025-06-18');
    void legacy.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    void legacy.transport.send({ jsonrpc: '2.0', id: 'l', method: 'tools/list', params: {} });
    expect((await legacy.answered('l')).result.tools[0].name).toBe('send_email');

    const modern = await spawnedWith([
      { id: 1, method: 'server/discover', params: { _meta: modernMeta('c-flat') } },
      { id: 2, method: 'tools/list', params: { _meta: modernMeta('c-per-channel') } },
    ]);
    expect((await modern.answered(2)).result.tools[0].name).toBe('send_email');
    // Once a connection's era is set it stays: the other era's opening request is refused.
    void legacy.transport.send({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: modernMeta() } } as never);
    expect((await legacy.answered('d')).error.code).toBe(-32601);
    void modern.transport.send({
      jsonrpc: '2.0',
      id: 3,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    expect((await modern.answered(3)).error.code).toBe(-32022);
    for (const s of [legacy, modern]) {
      await s.transport.close();
      expect([...s.byId.values()].every((answers) => answers.length === 1)).toBe(true);
      expect(s.transport.stderr).not.toContain('early answer differed');
    }
  });
});

describe('outbox', () => {
  it('prints the delivery records of those sends, the email as a complete MIME message', async () => {
    const { code, stdout } = await runCli(['outbox', '--limit', '100'], env);
    expect(code).toBe(0);
    const records = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
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
