/**
 * "A channel is one module plus one registry line", proven: a fifth channel that exists only
 * in test/fixtures/channels/pager/ is registered through the public seam,
 * `loadConfig(env, [...CHANNELS, pager])`, and with no other file touched it appears in
 * every profile, in validation, in a dry-run send, in the output schema (the SDK client
 * validates every result against it), in metrics and in the outbox; with credentials it
 * sends live through its own provider, retried by the generic machinery.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { CHANNELS } from '../../src/channels/registry.js';
import { notificationDef } from '../../src/channels/send-union.js';
import { loadConfig, PROFILES, type Profile } from '../../src/config/config.js';
import { createLogger, silentLogger } from '../../src/core/log.js';
import { sendNotification } from '../../src/notification/pipeline.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { pager } from '../fixtures/channels/pager/index.js';
import { cliEnv, ROOT, runCli, tempDataDir } from '../helpers/cli.js';
import { startFakePeer } from '../helpers/fakes.js';
import { assertBuilt } from '../helpers/mcp-cli.js';

const channels = [...CHANNELS, pager];
const dataDir = tempDataDir('notify-pager-');
const env = { NOTIFY_DATA_DIR: dataDir, HOME: dataDir, NOTIFY_PAGER_ALLOW: 'PABC123,PXYZ789', NOTIFY_RATE_LIMITS: 'pager=100/h' };
const config = loadConfig(env, channels);
const pagerFields = notificationDef(config.channels).variants.find((v) => v.value === 'pager')!.fields;
const [simple, full] = pager.examples;

type Args = Record<string, unknown>;

/** The same call, shaped as a client of each profile sends it. */
function shaped(profile: Profile, call: Args): { name: string; arguments: Args } {
  const { via, ...rest } = call;
  switch (profile) {
    case 'per-channel':
      return { name: `send_${String(via)}`, arguments: rest };
    case 'nested':
      return {
        name: 'send_notification',
        arguments: { notification: Object.fromEntries(['via', ...pagerFields, ...Object.keys(rest)].map((f) => [f, call[f] ?? null])) },
      };
    default:
      return { name: 'send_notification', arguments: call };
  }
}

function sourcesOf(dir: string): { file: string; text: string }[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => ({ file: join(e.parentPath, e.name), text: readFileSync(join(e.parentPath, e.name), 'utf8') }));
}

describe('a fifth channel, registered from the test folder', () => {
  let app: App;
  let http: HttpHandle;
  const clients: Client[] = [];
  const logLines: string[] = [];

  async function connect(profile: Profile): Promise<Client> {
    const client = new Client({ name: `pager-${profile}`, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp/${profile}`)));
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    app = await createApp(
      config,
      createLogger('info', (line) => void logLines.push(line)),
    );
    http = await serveHttp(app, { port: 0 });
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await http?.close();
    await app?.close();
  });

  it('lives in its own folder: nothing in src names it', () => {
    for (const { file, text } of sourcesOf('src')) expect(text, file).not.toMatch(/pager/i);
  });

  it("is in the start-up log's channel list", () => {
    const line = JSON.parse(logLines.find((l) => l.includes('"msg":"channels"'))!) as Record<string, unknown>;
    expect(line).toMatchObject({ email: 'dry-run', sms: 'dry-run', slack: 'dry-run', pager: 'dry-run' });
  });

  it('appears in every profile: the via enum, each branch list, its own tool, and the generated descriptions', () => {
    const send = (profile: Profile) => app.catalog[profile].tools.find((t) => t.name === 'send_notification')!;
    const flat = send('flat');
    expect(flat.description).toMatch(/^Set via to email, sms, slack or pager\. /);
    // summary's limit is pager's alone, so the flat schema holds it and the description does not repeat it.
    expect(flat.description).toContain(
      'pager: takes service (service ID, e.g. PABC123) and summary; optional severity (default error). Pages the on-call person',
    );
    const flatProps = flat.inputSchema.properties as Record<string, { enum?: string[]; maxLength?: number }>;
    expect(flatProps.summary!.maxLength).toBe(1024);
    expect(flatProps.via!.enum).toEqual(['email', 'sms', 'slack', 'pager']);
    expect(Object.keys(flatProps)).toEqual(expect.arrayContaining(['service', 'summary', 'severity']));

    const isPager = (branch: { properties?: { via?: { const?: unknown; enum?: unknown[] } } }) =>
      branch.properties?.via?.const === 'pager' || branch.properties?.via?.enum?.[0] === 'pager';
    const nested = send('nested').inputSchema.properties as { notification: { anyOf: object[] } };
    expect(nested.notification.anyOf.filter(isPager)).toHaveLength(1);
    expect((send('oneOf').inputSchema.oneOf as object[]).filter(isPager)).toHaveLength(1);

    const own = app.catalog['per-channel'].tools.find((t) => t.name === 'send_pager')!;
    // Its own schema states the generated limits; the description says what the schema cannot.
    expect(own.description).toMatch(/^Pages the on-call person of a service\./);
    expect(own.inputSchema.properties).toMatchObject({
      summary: { minLength: 1, maxLength: 1024 },
      service: { description: expect.stringContaining('PABC123') },
    });
    for (const profile of PROFILES) {
      for (const tool of app.catalog[profile].tools.filter((t) => t.name.startsWith('send_'))) {
        const out = tool.outputSchema!.properties as Record<string, { enum?: string[] }>;
        expect(out.via!.enum, `${profile}/${tool.name}`).toContain('pager');
        expect(out, `${profile}/${tool.name}`).toHaveProperty('dedup_key');
      }
    }
  });

  describe.each(PROFILES)('over HTTP, profile %s', (profile) => {
    it('sends in dry-run; the SDK client validates the result against the output schema', async () => {
      const client = await connect(profile);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain(profile === 'per-channel' ? 'send_pager' : 'send_notification');
      expect(client.getInstructions()).toContain('send_email/send_sms/send_slack/send_pager');

      for (const call of [simple, full]) {
        const result = await client.callTool(shaped(profile, { ...call }));
        expect(result.isError, JSON.stringify(result)).toBeFalsy();
        expect(result.structuredContent).toMatchObject({ via: 'pager', status: 'dry_run', provider: 'dry-run' });
        const { id, dedup_key } = result.structuredContent as { id: string; dedup_key: string };
        expect(dedup_key).toBe(id);
      }
    });

    it('validates its calls branch-first and applies its allowlist', async () => {
      const client = await connect(profile);
      const wrongField = await client.callTool(shaped(profile, { ...simple, body: 'Down' }));
      expect(wrongField.isError).toBe(true);
      expect((wrongField.structuredContent as { error: object }).error).toMatchObject({
        code: 'FIELD_NOT_ON_CHANNEL',
        via: 'pager',
        message: expect.stringContaining(
          'pager takes service (matching ^P[A-Z0-9]{6}$, e.g. PABC123), summary (1-1,024 characters) and severity only',
        ),
      });
      const badService = await client.callTool(shaped(profile, { ...simple, service: 'ops' }));
      expect((badService.structuredContent as { error: object }).error).toMatchObject({ code: 'INVALID_FIELD', via: 'pager' });
      const offList = await client.callTool(shaped(profile, { ...simple, service: 'PQQQ000' }));
      expect((offList.structuredContent as { error: object }).error).toMatchObject({
        code: 'RECIPIENT_NOT_ALLOWED',
        message: expect.stringContaining('NOTIFY_PAGER_ALLOW'),
      });
    });
  });

  it('is one of the channels an unknown via is told to use', async () => {
    const client = await connect('flat');
    const result = await client.callTool({ name: 'send_notification', arguments: { via: 'fax' } });
    expect((result.structuredContent as { error: { message: string } }).error.message).toBe(
      'Set via to email, sms, slack or pager: "fax" is not a channel.',
    );
  });

  it('replays an idempotent send like any channel', async () => {
    const client = await connect('per-channel');
    const call = shaped('per-channel', { ...simple, idempotency_key: 'page-once' });
    const first = await client.callTool(call);
    const again = await client.callTool(call);
    expect(again.structuredContent).toEqual({ ...(first.structuredContent as object), replayed: true });
  });

  it('is counted in metrics under its own via label and tool', async () => {
    const body = await (await fetch(`${http.url}/metrics`)).text();
    expect(body).toMatch(/notify_send_duration_seconds_count\{via="pager",outcome="ok"\} [1-9]/);
    expect(body).toMatch(/notify_send_duration_seconds_count\{via="pager",outcome="FIELD_NOT_ON_CHANNEL"\} [1-9]/);
    expect(body).toMatch(/notify_tool_calls_total\{tool="send_pager",outcome="ok"\} [1-9]/);
    expect(body).not.toMatch(/via="invalid",outcome="ok"/);
  });

  it('is in the outbox that `notify-mcp outbox` prints, with the exact payload', async () => {
    assertBuilt();
    // The built CLI knows only the built-in channels; the records are the store's.
    const { code, stdout, stderr } = await runCli(['outbox', '--limit', '100'], cliEnv({ NOTIFY_DATA_DIR: dataDir }));
    expect(code, stderr).toBe(0);
    const records = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { via: string; status: string; payload: unknown; id: string });
    const pages = records.filter((r) => r.via === 'pager');
    expect(pages.length).toBeGreaterThanOrEqual(PROFILES.length * 2);
    expect(pages[0]).toMatchObject({ status: 'dry_run', provider: 'dry-run' });
    expect(pages.find((r) => (r.payload as { payload: { source: string } }).payload.source === 'PABC123')!.payload).toEqual({
      routing_key: '(dry-run)',
      event_action: 'trigger',
      dedup_key: expect.stringMatching(/^ntf_/),
      payload: { summary: 'db-1 is down', source: 'PABC123', severity: 'error' },
    });
  });

  it('goes live with its credentials: the payload it built reaches its provider, and a 429 is retried', async () => {
    const peer = await startFakePeer();
    peer.replies.push({ status: 429 }, { status: 202, json: { status: 'success', dedup_key: 'pd-1' } });
    const live = await createApp(
      loadConfig(
        { ...env, NOTIFY_DATA_DIR: tempDataDir('notify-pager-live-'), PAGER_ROUTING_KEY: 'rk-1', PAGER_API_URL: peer.origin },
        channels,
      ),
      silentLogger,
    );
    try {
      const result = await sendNotification(live, 'pager', { ...simple }, { client: 'test' });
      expect(result).toMatchObject({ via: 'pager', status: 'sent', provider: 'pager', provider_message_id: 'pd-1' });
      expect(peer.requests).toHaveLength(2);
      expect(JSON.parse(peer.requests[1]!.body)).toEqual({
        routing_key: 'rk-1',
        event_action: 'trigger',
        dedup_key: result.id,
        payload: { summary: 'db-1 is down', source: 'PABC123', severity: 'error' },
      });
      const [record] = await live.store.listDeliveries(1);
      expect(record).toMatchObject({ via: 'pager', status: 'sent', attempts: 2 });
    } finally {
      await live.close();
      await peer.close();
    }
  });

  it('a live channel without its allowlist refuses to start, naming the variable', () => {
    expect(() => loadConfig({ PAGER_ROUTING_KEY: 'rk', PAGER_API_URL: 'http://127.0.0.1:9' }, channels)).toThrow(
      'pager is live (credentials are set) but NOTIFY_PAGER_ALLOW is not',
    );
  });
});
