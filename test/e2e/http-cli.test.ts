/**
 * The built CLI as `notify-mcp --http`, driven by the v2 SDK's Client as a 2025-11-25
 * client (session) and pinned to 2026-07-28 (stateless), against one process: the same
 * tools per profile in both eras and the same as over stdio, a dry-run send, a branch-first
 * error, and the profile chosen by token, path and clientInfo.
 */
import { StreamableHTTPClientTransport, type Client, type Tool } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, tempDataDir } from '../helpers/cli.js';
import { VALID_EXAMPLES } from '../helpers/examples.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { ERAS, eraClient, errorOf, type Era, type ToolOutcome } from '../helpers/mcp-cli.js';

const OPS = 'ops-token-0123456789abcdef';
const BILLING = 'billing-token-0123456789ab';
const env = cliEnv({
  NOTIFY_DATA_DIR: tempDataDir('notify-e2e-http-'),
  NOTIFY_HTTP_TOKENS: `ops-bot:${OPS},billing-bot:${BILLING}:nested`,
  NOTIFY_CLIENT_PROFILES: 'ops-agent=oneOf,pager-agent=per-channel',
});

let server: HttpCli;
let url: string;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startHttpCli(env);
  url = server.url;
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await server?.stop();
});

async function connect(era: Era, opts: { token?: string; path?: string; name?: string } = {}): Promise<Client> {
  const client = eraClient(opts.name ?? 'e2e-http', era);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url.replace(/\/mcp$/, opts.path ?? '/mcp')), {
      requestInit: { headers: { Authorization: `Bearer ${opts.token ?? OPS}` } },
    }),
  );
  clients.push(client);
  expect(client.getProtocolEra()).toBe(era);
  return client;
}

function shapeOf(tools: Tool[]): string {
  if (tools[0]!.name !== 'send_notification') return 'per-channel';
  const schema = tools[0]!.inputSchema as Record<string, any>;
  if (schema.properties && 'notification' in schema.properties) return 'nested';
  return 'oneOf' in schema ? 'oneOf' : 'flat';
}

describe('notify-mcp --http, both eras on one endpoint', () => {
  it('chooses the profile by token, then path, then clientInfo, then the default, in both eras', async () => {
    for (const era of ERAS) {
      const shape = async (opts: { token?: string; path?: string; name?: string }) =>
        shapeOf((await (await connect(era, opts)).listTools()).tools);
      expect(await shape({ token: BILLING, path: '/mcp/per-channel', name: 'ops-agent' }), era).toBe('nested');
      expect(await shape({ path: '/mcp/per-channel', name: 'ops-agent' }), era).toBe('per-channel');
      expect(await shape({ name: 'ops-agent' }), era).toBe('oneOf');
      expect(await shape({ name: 'pager-agent' }), era).toBe('per-channel');
      expect(await shape({ name: 'someone' }), era).toBe('flat');
    }
  });

  it('offers the same tools per profile in both eras, and the same as `notify-mcp schema`', async () => {
    for (const profile of ['flat', 'nested', 'oneOf', 'per-channel']) {
      const [legacy, modern] = await Promise.all(
        ERAS.map(async (era) => (await (await connect(era, { path: `/mcp/${profile}` })).listTools()).tools),
      );
      expect(JSON.stringify(modern), profile).toBe(JSON.stringify(legacy));
      const { stdout } = await runCli(['schema', '--profile', profile], env);
      expect(JSON.parse(JSON.stringify(legacy)), profile).toEqual(JSON.parse(stdout).tools);
    }
  });

  it.each(ERAS)('sends in dry-run and answers a misplaced field by channel (%s client)', async (era) => {
    const client = await connect(era);
    const sent = (await client.callTool({ name: 'send_notification', arguments: VALID_EXAMPLES.sms![0]! })) as ToolOutcome;
    expect(sent.isError, JSON.stringify(sent)).toBeFalsy();
    expect(sent.structuredContent).toMatchObject({ via: 'sms', status: 'dry_run', id: expect.stringMatching(/^ntf_/) });
    const bad = (await client.callTool({
      name: 'send_notification',
      arguments: { ...VALID_EXAMPLES.sms![0]!, subject: 'Outage' },
    })) as ToolOutcome;
    expect(errorOf(bad)).toMatchObject({ code: 'FIELD_NOT_ON_CHANNEL', via: 'sms' });
  });
});
