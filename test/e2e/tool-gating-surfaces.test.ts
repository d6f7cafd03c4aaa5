/**
 * A group withheld by NOTIFY_TOOLS or NOTIFY_TOKEN_TOOLS is withheld at every door, not only
 * tools/list and tools/call: banner resources (list, read, subscribe, a 2026-07-28 listen) and
 * the console's banner page and its actions, for an operator whose token is narrowed too.
 * In process over HTTP, both eras; over stdio through the built CLI.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/core/log.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { raw } from '../helpers/http.js';
import { connectCli, ERAS, eraClient, type Era } from '../helpers/mcp-cli.js';
import { bannerRecord } from '../helpers/banner-record.js';

/** What a client gets of banner resources: the URIs listed and the text read (the SDK answers a server without resources itself, or the server refuses). */
async function bannerResources(client: Client): Promise<{ listed: string[]; read: string }> {
  const listed = await client.listResources().then(
    (r) => r.resources.map((x) => x.uri),
    () => [],
  );
  const read = await client.readResource({ uri: 'banners://active/all' }).then(
    (r) => JSON.stringify(r.contents),
    (err: Error) => `refused: ${err.message}`,
  );
  return { listed, read };
}

const OPS = 'ops-token-0123456789abcdef';
const LEAD = 'lead-token-0123456789abcde';
const BOT = 'bot-token-0123456789abcdef';

describe('withheld banners over HTTP: resources and the console', () => {
  let app: App;
  let http: HttpHandle;
  const clients: Client[] = [];
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-gating-surfaces-'));
    app = await createApp(
      loadConfig({
        NOTIFY_DATA_DIR: dir,
        HOME: dir,
        NOTIFY_HTTP_TOKENS: `ops:${OPS},lead:${LEAD},bot:${BOT}`,
        NOTIFY_OPERATOR_CLIENTS: 'ops,lead',
        NOTIFY_TOKEN_TOOLS: 'ops=status,bot=send+status',
      }),
      createLogger('error', () => {}),
    );
    http = await serveHttp(app, { port: 0 });
    await app.store.insertBanner(
      bannerRecord(Date.now(), { id: 'bnr_withheld', text: 'withheld banner text', audience: 'all', expires_at: null }),
    );
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await http?.close();
    await app?.close();
  });

  async function connect(era: Era, token: string): Promise<Client> {
    const client = eraClient(`surfaces-${era}`, era);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    clients.push(client);
    return client;
  }

  it.each(ERAS)('serves no banner resource to a %s client not offered list_banners; serves them to one that is', async (era) => {
    const bot = await connect(era, BOT);
    expect(bot.getServerCapabilities()?.resources).toBeUndefined();
    const got = await bannerResources(bot);
    expect(got.listed).toEqual([]);
    expect(got.read).toMatch(/^refused: /);
    const lead = await connect(era, LEAD);
    expect((await lead.listResources()).resources.map((r) => r.uri)).toEqual(['banners://active/all']);
    const read = await lead.readResource({ uri: 'banners://active/all' });
    expect(JSON.stringify(read.contents)).toContain('withheld banner text');
  });

  it('answers a 2026-07-28 listen for banner resources as method not found for a token not offered them', async () => {
    const listen = (token: string) =>
      raw(`${http.url}/mcp`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'subscriptions/listen',
          Authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'subscriptions/listen',
          params: {
            notifications: { resourceSubscriptions: ['banners://active/all'] },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
    const r = await listen(BOT);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ id: 7, error: { code: -32601 } });
  });

  it('shows the console banner page, its form and its actions only to an operator offered the banner tools', async () => {
    const as = (token: string, path: string, method = 'GET', body = '') =>
      raw(`${http.url}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          ...(method === 'POST' ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
        },
        body,
      });
    // ops is narrowed to status: no Banners link, no page, no action.
    const home = await as(OPS, '/console');
    expect(home.status).toBe(200);
    expect(home.body).not.toContain('href="/console/banners"');
    const page = await as(OPS, '/console/banners');
    expect(page.status).toBe(404);
    expect(page.body).not.toContain('withheld banner text');
    expect((await as(OPS, '/console/banners', 'POST', 'text=from+ops&audience=all')).status).toBe(404);
    expect((await as(OPS, '/console/banners/bnr_withheld/dismiss', 'POST', '')).status).toBe(404);
    expect((await app.store.listBanners({ status: 'active', now: Date.now() })).map((b) => b.text)).toEqual(['withheld banner text']);
    // lead is offered every group.
    const leads = await as(LEAD, '/console/banners');
    expect(leads.status).toBe(200);
    expect(leads.body).toContain('withheld banner text');
    expect(leads.body).toContain('Show a banner');
  });
});

describe('withheld banners over stdio (NOTIFY_TOOLS=send,status)', () => {
  it.each(ERAS)('offers a %s client no banner resource', async (era) => {
    const s = await connectCli(
      cliEnv({ NOTIFY_DATA_DIR: tempDataDir('notify-gating-surfaces-'), NOTIFY_TOOLS: 'send,status' }),
      'gated',
      era,
    );
    try {
      expect(s.client.getServerCapabilities()?.resources).toBeUndefined();
      const got = await bannerResources(s.client);
      expect(got.listed).toEqual([]);
      expect(got.read).toMatch(/^refused: /);
    } finally {
      await s.close();
    }
  });
});
