/**
 * The built CLI over stdio, driven by the SDK's own Client as an MCP host would: each
 * profile chosen through NOTIFY_CLIENT_PROFILES, a dry-run send on every channel, a
 * channel-shaped error, and nothing but JSON-RPC on stdout.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ChildStdioTransport, cliEnv, runCli, tempDataDir } from './helpers/cli.js';
import { CHANNEL_FIELDS as FIELDS, CHANNEL_TOOLS, FIRST_EXAMPLES, VALID_EXAMPLES } from './helpers/examples.js';

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
afterAll(async () => {
  await Promise.all(transports.map((t) => t.close()));
});

describe.each(Object.keys(SHAPES))('stdio, profile %s', (profile) => {
  it('lists, sends on every channel, and answers a misplaced field by channel', async () => {
    const transport = new ChildStdioTransport([], env);
    transports.push(transport);
    const client = new Client({ name: `c-${profile}`, version: '1.0.0' });
    await client.connect(transport);

    const { tools } = await client.listTools();
    const expected = profile === 'per-channel' ? CHANNEL_TOOLS : ['send_notification'];
    expect(tools.map((t) => t.name)).toEqual([...expected, 'show_banner', 'dismiss_banner', 'list_banners']);

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
      message: expect.stringContaining('Drop subject, or set via to email'),
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

describe('outbox', () => {
  it('prints the delivery records of those sends, the email as a complete MIME message', async () => {
    const { code, stdout } = await runCli(['outbox', '--limit', '100'], env);
    expect(code).toBe(0);
    const records = stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(records.length).toBeGreaterThanOrEqual(12);
    const mail = records.find((r) => r.via === 'email');
    expect(mail.status).toBe('dry_run');
    expect(mail.payload.raw).toMatch(/^X-Notification-ID: ntf_/im);
    expect(mail.payload.raw).toContain('multipart/alternative');
    expect(mail.payload.raw).toContain(`Message-ID: <${mail.id}@`);
    expect(records.find((r) => r.via === 'sms').payload).toEqual({ To: '+14155550123', Body: 'Server down' });
    expect(records.map((r) => r.client)).toEqual(expect.arrayContaining(['c-flat', 'c-nested']));
  });
});
