/**
 * Tool gating over the built CLI (DESIGN section 10): NOTIFY_TOOLS narrows what the server
 * offers, NOTIFY_TOKEN_TOOLS narrows it per token client. A tool not offered is neither
 * listed nor callable (answered as an unknown tool), in both eras, over stdio and HTTP; a
 * list that varies by token is cacheScope private; `schema` and `doctor` say what each
 * token is offered.
 */
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, tempDataDir } from '../helpers/cli.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { connectCli, ERAS, eraClient, type Era } from '../helpers/mcp-cli.js';

const OPS = 'ops-token-0123456789abcdef';
const STATUS = 'status-token-0123456789ab';
const RO = 'readonly-token-0123456789';
const SEND = { via: 'email', to: 'a@example.com', subject: 'hi', body_html: '<p>hi</p>' };

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);

/** How the server answers a tool it does not have, to compare a withheld tool's answer with. */
async function refusal(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  try {
    const r = await client.callTool({ name, arguments: args });
    return `answered: ${JSON.stringify(r.structuredContent)}`;
  } catch (err) {
    return (err as Error).message.replace(/"[a-z_]+"/, '"<name>"');
  }
}

describe('NOTIFY_TOOLS over stdio', () => {
  it.each(ERAS)('offers only the read-only tools to a %s client, and answers a withheld one as an unknown tool', async (era) => {
    const env = cliEnv({ NOTIFY_DATA_DIR: tempDataDir('notify-gating-'), NOTIFY_TOOLS: 'read-only' });
    const s = await connectCli(env, 'gated', era);
    try {
      expect(await names(s.client)).toEqual(['get_notification', 'list_banners']);
      const withheld = await refusal(s.client, 'send_notification', SEND);
      expect(withheld).toMatch(/Unknown tool/);
      expect(withheld).toContain('Available tools: get_notification, list_banners');
      expect(withheld).toBe(await refusal(s.client, 'no_such_tool', SEND));
      // Nothing was sent or recorded.
      const { stdout } = await runCli(['outbox'], env);
      expect(stdout.trim()).toBe('');
      // The offered tools still answer.
      const listed = await s.client.callTool({ name: 'list_banners', arguments: {} });
      expect(listed.isError).toBeFalsy();
      // The instructions name no tool the server withholds.
      expect(s.client.getInstructions()).not.toContain('send_notification');
    } finally {
      await s.close();
    }
  });

  it('refuses a group it does not know at start, naming the groups', async () => {
    const r = await runCli(['schema'], cliEnv({ NOTIFY_DATA_DIR: tempDataDir('notify-gating-'), NOTIFY_TOOLS: 'send,write' }));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('NOTIFY_TOOLS: "write" in the list is not a tool group; use send, status, banners, read-only');
  });
});

describe('NOTIFY_TOKEN_TOOLS over HTTP', () => {
  const env = cliEnv({
    NOTIFY_DATA_DIR: tempDataDir('notify-gating-http-'),
    NOTIFY_HTTP_TOKENS: `ops-bot:${OPS},status-bot:${STATUS}:per-channel,ro:${RO}`,
    NOTIFY_TOKEN_TOOLS: 'status-bot=status+banners,ro=read-only',
  });
  let server: HttpCli;
  const clients: Client[] = [];
  beforeAll(async () => {
    server = await startHttpCli(env);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await server?.stop();
  });

  async function connect(era: Era, token: string): Promise<Client> {
    const client = eraClient(`gating-${era}`, era);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    clients.push(client);
    return client;
  }

  it.each(ERAS)('lists and answers per token for a %s client', async (era) => {
    const ops = await connect(era, OPS);
    const status = await connect(era, STATUS);
    const ro = await connect(era, RO);
    expect(await names(ops)).toEqual([
      'send_notification',
      'get_notification',
      'edit_notification',
      'retract_notification',
      'show_banner',
      'dismiss_banner',
      'list_banners',
    ]);
    expect(await names(status)).toEqual(['get_notification', 'show_banner', 'dismiss_banner', 'list_banners']);
    expect(await names(ro)).toEqual(['get_notification', 'list_banners']);

    // A withheld tool answers as an unknown one; the same call from a token offered it goes through.
    expect(await refusal(ro, 'show_banner', { text: 'x' })).toBe(await refusal(ro, 'no_such_tool', { text: 'x' }));
    expect(await refusal(status, 'send_email', { to: 'a@example.com', subject: 's', body_html: '<p>x</p>' })).toMatch(/Unknown tool/);
    expect(await refusal(status, 'send_notification', SEND)).toMatch(/Unknown tool/);
    const sent = await ops.callTool({ name: 'send_notification', arguments: SEND });
    expect(sent.isError).toBeFalsy();
    const id = (sent.structuredContent as { id: string }).id;
    // ops-bot's own notification: another token sees NOT_FOUND, but the tool answers.
    const got = await ro.callTool({ name: 'get_notification', arguments: { id } });
    expect((got.structuredContent as { error: { code: string } }).error.code).toBe('NOT_FOUND');
  });

  it('marks the lists private under 2026-07-28, since they vary by token', async () => {
    for (const token of [OPS, RO]) {
      const r = await fetch(server.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'tools/list',
          Authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/list',
          params: {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
      const body = (await r.json()) as { result: { cacheScope: string; tools: unknown[] } };
      expect(body.result.cacheScope).toBe('private');
    }
  });

  it('shows in `schema` and `doctor` what each token is offered', async () => {
    const schema = await runCli(['schema'], env);
    expect(schema.code).toBe(0);
    const printed = JSON.parse(schema.stdout) as {
      groups: string[];
      tokens: Record<string, { profile: string; groups: string[]; tools: string[]; fingerprint: string }>;
    };
    expect(printed.groups).toEqual(['send', 'status', 'banners', 'read-only']);
    expect(printed.tokens['ro']).toMatchObject({ profile: 'flat', groups: ['read-only'], tools: ['get_notification', 'list_banners'] });
    expect(printed.tokens['status-bot']).toMatchObject({ profile: 'per-channel', groups: ['status', 'banners'] });
    expect(printed.tokens['status-bot']!.tools).toEqual(['get_notification', 'show_banner', 'dismiss_banner', 'list_banners']);
    expect(printed.tokens['ops-bot']!.tools).toContain('send_notification');
    expect(new Set(Object.values(printed.tokens).map((t) => t.fingerprint)).size).toBe(3);

    const doctor = await runCli(['doctor', '--json'], env);
    const line = (JSON.parse(doctor.stdout) as { checks: { name: string; detail: string }[] }).checks.find((c) => c.name === 'tools')!;
    expect(line.detail).toContain('token ro: read-only (get_notification, list_banners)');
    expect(line.detail).toContain('token status-bot: status+banners (get_notification, show_banner, dismiss_banner, list_banners)');
    expect(line.detail).toContain('token ops-bot: every group (send_notification, get_notification');
  });
});
