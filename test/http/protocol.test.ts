/**
 * MCP 2026-07-28 over Streamable HTTP on the wire, with raw requests: no sessions, the
 * MCP-Protocol-Version / Mcp-Method / Mcp-Name rules and their status codes (-32020,
 * -32022, -32602, 404, 405), a 2025 header in front of a 2026 body, what stays in front
 * (401, 403, 413), the profile chosen per request from each request's clientInfo, and
 * tools/list with ttlMs and a truthful cacheScope, byte-identical per profile in both eras;
 * progress on the request's own stream in both eras.
 */
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/core/log.js';
import { TOOLS_LIST_TTL_MS } from '../../src/mcp/server.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { startFakePeer } from '../helpers/fakes.js';
import { ERAS, eraClient } from '../helpers/mcp-cli.js';

const MODERN = '2026-07-28';
const OPS = 'ops-token-0123456789abcdef';
const BILLING = 'billing-token-0123456789ab';

type Reply = { status: number; headers: Record<string, string | string[] | undefined>; body: string; json: any };

function raw(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: opts.method ?? 'POST', headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, body, json });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A POST of exact bytes (raw() writes strings). */
function rawBytes(url: string, headers: Record<string, string>, body: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const meta = (client?: string) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  ...(client === undefined ? {} : { 'io.modelcontextprotocol/clientInfo': { name: client, version: '1' } }),
});

interface ModernOptions {
  client?: string;
  token?: string;
  id?: number;
  /** Header overrides; `null` removes the header. */
  headers?: Record<string, string | null>;
  params?: Record<string, unknown>;
}

/** A 2026-07-28 request as a conforming client sends it: envelope, and headers mirroring the body. */
function modern(method: string, opts: ModernOptions = {}): { headers: Record<string, string>; body: string } {
  const params = { ...opts.params, _meta: meta(opts.client) } as Record<string, unknown>;
  const headers: Record<string, string | null> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': method,
    ...(typeof params.name === 'string' ? { 'Mcp-Name': params.name } : {}),
    ...(opts.token ? { Authorization: `Bearer ${opts.token}` } : {}),
    ...opts.headers,
  };
  return {
    headers: Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== null)),
    body: JSON.stringify({ jsonrpc: '2.0', id: opts.id ?? 1, method, params }),
  };
}

const env = (extra: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-proto-'));
  return { NOTIFY_DATA_DIR: dir, HOME: dir, ...extra };
};

/** The profile a tools/list answer is shaped for. */
function shapeOf(tools: { name: string; inputSchema: Record<string, any> }[]): string {
  if (tools[0]!.name !== 'send_notification') return 'per-channel';
  const schema = tools[0]!.inputSchema;
  if (schema.properties && 'notification' in schema.properties) return 'nested';
  return 'oneOf' in schema ? 'oneOf' : 'flat';
}

describe('2026-07-28 over HTTP, with tokens and NOTIFY_CLIENT_PROFILES', () => {
  let app: App;
  let http: HttpHandle;
  const post = (path: string, req: { headers: Record<string, string>; body: string }) => raw(`${http.url}${path}`, req);

  beforeAll(async () => {
    app = await createApp(
      loadConfig(
        env({
          NOTIFY_HTTP_TOKENS: `ops-bot:${OPS},billing-bot:${BILLING}:nested`,
          NOTIFY_CLIENT_PROFILES: 'ops-agent=oneOf,pager-agent=per-channel',
        }),
      ),
      silentLogger,
    );
    http = await serveHttp(app, { port: 0 });
  });
  afterAll(async () => {
    await http?.close();
    await app?.close();
  });

  it('answers tools/list statelessly: JSON, no session id minted, ttlMs, a private cacheScope, serverInfo', async () => {
    const before = http.sessionCount();
    const r = await post('/mcp', modern('tools/list', { token: OPS }));
    expect(r.status, r.body).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.headers['mcp-session-id']).toBeUndefined();
    expect(http.sessionCount()).toBe(before);
    expect(r.json.result.ttlMs).toBe(TOOLS_LIST_TTL_MS);
    // Tokens carry profiles and clientInfo is mapped: another caller may get another list.
    expect(r.json.result.cacheScope).toBe('private');
    expect(r.json.result._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'notify-mcp' });
  });

  it("chooses the profile from each request's own clientInfo, after the credential and the endpoint", async () => {
    const shape = async (path: string, client?: string, token = OPS) => {
      const r = await post(path, modern('tools/list', { token, client }));
      expect(r.status, r.body).toBe(200);
      return shapeOf(r.json.result.tools);
    };
    // One process, one endpoint, three callers, three lists, interleaved.
    expect(await shape('/mcp', 'ops-agent')).toBe('oneOf');
    expect(await shape('/mcp', 'pager-agent')).toBe('per-channel');
    expect(await shape('/mcp')).toBe('flat');
    expect(await shape('/mcp', 'ops-agent')).toBe('oneOf');
    // The endpoint beats clientInfo; the credential beats both.
    expect(await shape('/mcp/nested', 'ops-agent')).toBe('nested');
    expect(await shape('/mcp/per-channel', 'ops-agent', BILLING)).toBe('nested');

    // A call is routed by its clientInfo too: send_sms is a per-channel tool.
    const sms = { name: 'send_sms', arguments: { to: '+14155550123', body: 'per request' } };
    const asPager = await post('/mcp', modern('tools/call', { token: OPS, client: 'pager-agent', params: sms }));
    expect(asPager.json.result.structuredContent).toMatchObject({ via: 'sms', status: 'dry_run' });
    // Records carry the token's client, never the self-reported name.
    const record = (await app.store.listDeliveries(10)).find((d) => d.id === asPager.json.result.structuredContent.id);
    expect(record?.client).toBe('ops-bot');
    const asOps = await post('/mcp', modern('tools/call', { token: OPS, client: 'ops-agent', params: sms }));
    expect(asOps.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool "send_sms"') });
  });

  it('gives the same bytes for the same profile, request after request, and the same tools as a 2025-11-25 session', async () => {
    const a = await post('/mcp', modern('tools/list', { token: OPS, client: 'ops-agent', id: 7 }));
    const b = await post('/mcp', modern('tools/list', { token: OPS, client: 'ops-agent', id: 7 }));
    expect(a.body).toBe(b.body);

    // 2025-11-25: initialize, then tools/list in the session; same tools, no cache fields.
    const legacyHeaders = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${OPS}`,
    };
    const init = await raw(`${http.url}/mcp`, {
      headers: legacyHeaders,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ops-agent', version: '1' } },
      }),
    });
    const sid = init.headers['mcp-session-id'] as string;
    expect(sid).toBeTruthy();
    const sessionHeaders = { ...legacyHeaders, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' };
    await raw(`${http.url}/mcp`, {
      headers: sessionHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    const listed = await raw(`${http.url}/mcp`, {
      headers: sessionHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    const legacyResult = parseSse(listed).result;
    expect(JSON.stringify(legacyResult.tools)).toBe(JSON.stringify(a.json.result.tools));
    expect(legacyResult).not.toHaveProperty('ttlMs');
    expect(legacyResult).not.toHaveProperty('cacheScope');
    await raw(`${http.url}/mcp`, { method: 'DELETE', headers: sessionHeaders });
  });

  it('answers server/discover with the revisions it speaks', async () => {
    const r = await post('/mcp', modern('server/discover', { token: OPS }));
    expect(r.status).toBe(200);
    expect(r.json.result.supportedVersions).toContain(MODERN);
    expect(r.json.result.capabilities).toMatchObject({ tools: {} });
    expect(r.json.result.cacheScope).toBe('public');
  });

  describe('header and body rules', () => {
    const expectError = (r: Reply, status: number, code: number, id: number | null = 1) => {
      expect(r.status, r.body).toBe(status);
      expect(r.json).toMatchObject({ jsonrpc: '2.0', id, error: { code } });
    };
    const call = { name: 'list_banners', arguments: {} };

    it('refuses a header that disagrees with the body, or is missing, with 400 and -32020', async () => {
      expectError(await post('/mcp', modern('tools/list', { token: OPS, headers: { 'Mcp-Method': 'tools/call' } })), 400, -32020);
      expectError(await post('/mcp', modern('tools/list', { token: OPS, headers: { 'Mcp-Method': null } })), 400, -32020);
      expectError(
        await post('/mcp', modern('tools/call', { token: OPS, params: call, headers: { 'Mcp-Name': 'show_banner' } })),
        400,
        -32020,
      );
      expectError(await post('/mcp', modern('tools/call', { token: OPS, params: call, headers: { 'Mcp-Name': null } })), 400, -32020);
      expectError(await post('/mcp', modern('tools/list', { token: OPS, headers: { 'MCP-Protocol-Version': null } })), 400, -32020);
      // The well-formed call passes.
      expect((await post('/mcp', modern('tools/call', { token: OPS, params: call }))).json.result.structuredContent).toHaveProperty(
        'banners',
      );
    });

    it('refuses a revision it does not speak with 400 and -32022 naming the ones it does', async () => {
      const req = modern('tools/list', { token: OPS, headers: { 'MCP-Protocol-Version': '2099-01-01' } });
      req.body = req.body.replace(MODERN, '2099-01-01');
      const r = await post('/mcp', req);
      expectError(r, 400, -32022);
      expect(r.json.error.data.supported).toContain(MODERN);
    });

    it('refuses a malformed envelope with 400 and -32602', async () => {
      // The header names 2026-07-28 but the body has no envelope.
      const bare = modern('tools/list', { token: OPS });
      bare.body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
      expectError(await post('/mcp', bare), 400, -32602);
      const noCapabilities = modern('tools/list', { token: OPS });
      noCapabilities.body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } },
      });
      expectError(await post('/mcp', noCapabilities), 400, -32602);
    });

    it('answers a method it does not have, initialize included, with 404 and -32601', async () => {
      expectError(await post('/mcp', modern('prompts/list', { token: OPS })), 404, -32601);
      expectError(
        await post(
          '/mcp',
          modern('initialize', {
            token: OPS,
            params: { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
          }),
        ),
        404,
        -32601,
      );
    });

    it('serves a 2026-07-28 body sent behind a 2025 MCP-Protocol-Version header (the body decides)', async () => {
      const behindOldHeader = modern('tools/call', {
        token: OPS,
        client: 'pager-agent',
        params: { name: 'send_sms', arguments: { to: '+14155550123', body: 'old header' } },
        headers: { 'MCP-Protocol-Version': '2025-06-18', 'Mcp-Method': null, 'Mcp-Name': null },
      });
      const r = await post('/mcp', behindOldHeader);
      expect(r.status, r.body).toBe(200);
      expect(r.json.result.structuredContent).toMatchObject({ via: 'sms', status: 'dry_run' });
      expect(r.headers['mcp-session-id']).toBeUndefined();
      // Mirrored headers that are present must still agree with the body.
      const lying = modern('tools/list', { token: OPS, headers: { 'MCP-Protocol-Version': '2025-11-25', 'Mcp-Method': 'tools/call' } });
      expectError(await post('/mcp', lying), 400, -32020);
      // A header naming no revision at all is not a 2025 client: judged as sent.
      expectError(await post('/mcp', modern('tools/list', { token: OPS, headers: { 'MCP-Protocol-Version': '1.0' } })), 400, -32020);
    });

    it('answers GET and DELETE from a 2026-07-28 client with 405, ignores a stray session id, and refuses batches', async () => {
      for (const method of ['GET', 'DELETE']) {
        const r = await raw(`${http.url}/mcp`, {
          method,
          headers: { 'MCP-Protocol-Version': MODERN, Accept: 'text/event-stream', Authorization: `Bearer ${OPS}` },
        });
        expect(r.status, method).toBe(405);
        expect(r.headers.allow).toBe('POST');
      }
      const stray = await post('/mcp', modern('tools/list', { token: OPS, headers: { 'Mcp-Session-Id': 'no-such-session' } }));
      expect(stray.status).toBe(200);
      expect(stray.headers['mcp-session-id']).toBeUndefined();

      const one = JSON.parse(modern('tools/list').body);
      const batch = await raw(`${http.url}/mcp`, {
        headers: modern('tools/list', { token: OPS }).headers,
        body: JSON.stringify([one, { ...one, id: 2 }]),
      });
      expect(batch.status).toBe(400);
      expect(batch.json.error.code).toBe(-32600);
    });
  });

  describe('what stands in front applies to 2026-07-28 requests too', () => {
    it('401 without or with a wrong token, with WWW-Authenticate', async () => {
      const missing = await post('/mcp', modern('tools/list'));
      expect(missing.status).toBe(401);
      expect(missing.headers['www-authenticate']).toBe('Bearer realm="notify-mcp"');
      const wrong = await post('/mcp', modern('tools/list', { token: `${OPS}x` }));
      expect(wrong.status).toBe(401);
      expect(wrong.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    });

    it('403 for a foreign Host or Origin', async () => {
      const req = modern('tools/list', { token: OPS });
      const host = await post('/mcp', { ...req, headers: { ...req.headers, Host: `evil.example:${http.port}` } });
      expect(host.status).toBe(403);
      // Each refusal names the variable that admits a name this server really has.
      expect(host.json).toMatchObject({
        error: {
          code: 'FORBIDDEN_HOST',
          message: expect.stringMatching(/^If this server .*NOTIFY_HTTP_ALLOWED_HOSTS.*"evil\.example:\d+"/),
        },
      });
      const origin = await post('/mcp', { ...req, headers: { ...req.headers, Origin: 'http://evil.example' } });
      expect(origin.status).toBe(403);
      expect(origin.json).toMatchObject({
        error: { message: expect.stringMatching(/NOTIFY_HTTP_ALLOWED_HOSTS.*"http:\/\/evil\.example"/) },
      });
    });

    it('413 for a body over the message cap (1 MiB plus the attachment allowance)', async () => {
      const big = modern('tools/call', {
        token: OPS,
        params: {
          name: 'send_notification',
          arguments: { via: 'email', to: 'ops@example.com', subject: 'x', body_html: 'x'.repeat(5 * 1024 * 1024) },
        },
      });
      expect((await post('/mcp', big)).status).toBe(413);
    });
  });
});

describe('what the SDK would dump or drop, over HTTP', () => {
  let app: App;
  let http: HttpHandle;
  beforeAll(async () => {
    app = await createApp(loadConfig(env({})), silentLogger);
    http = await serveHttp(app, { port: 0 });
  });
  afterAll(async () => {
    await http?.close();
    await app?.close();
  });

  /** A 2025-11-25 session: its id and the headers its requests carry. */
  async function legacySession(): Promise<Record<string, string>> {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const init = await raw(`${http.url}/mcp`, {
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    const session = { ...headers, 'Mcp-Session-Id': init.headers['mcp-session-id'] as string, 'MCP-Protocol-Version': '2025-11-25' };
    await raw(`${http.url}/mcp`, { headers: session, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    return session;
  }

  it.each(ERAS)('answers a tools/call whose arguments are not an object with the coded INVALID_FIELD result (%s)', async (era) => {
    const session = era === 'legacy' ? await legacySession() : undefined;
    for (const args of ['to me', [1], 5]) {
      const params = { name: 'send_notification', arguments: args };
      const r = session
        ? await raw(`${http.url}/mcp`, { headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params }) })
        : await raw(`${http.url}/mcp`, modern('tools/call', { params, id: 3 }));
      const message = parseSse(r);
      expect(message.error, r.body).toBeUndefined();
      expect(message.result.isError).toBe(true);
      expect(message.result.structuredContent.error).toMatchObject({ code: 'INVALID_FIELD', path: '' });
    }
  });

  it.each(ERAS)('answers arguments holding a list of 400,000 items with a coded result, not a 500 (%s)', async (era) => {
    // The `__proto__` screen walked it with push(...list): a stack overflow on a wide, shallow value.
    const session = era === 'legacy' ? await legacySession() : undefined;
    const wide = Array.from({ length: 400_000 }, () => 0);
    const cases: [string, Record<string, unknown>, string][] = [
      ['send_notification', { via: 'email', to: wide, subject: 's', body_html: 'x' }, '/to'],
      ['show_banner', { text: wide, audience: 'all' }, '/text'],
    ];
    for (const [name, args, path] of cases) {
      const params = { name, arguments: args };
      const r = session
        ? await raw(`${http.url}/mcp`, { headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params }) })
        : await raw(`${http.url}/mcp`, modern('tools/call', { params, id: 8 }));
      expect(r.status, r.body.slice(0, 200)).toBe(200);
      const message = parseSse(r);
      expect(message.result.isError).toBe(true);
      expect(message.result.structuredContent.error.path.startsWith(path), JSON.stringify(message.result.structuredContent.error)).toBe(
        true,
      );
      expect(r.body.length).toBeLessThan(16 * 1024);
    }
  });

  it.each(ERAS)(
    'refuses a client name holding a lone surrogate with -32602: it went into the delivery record as U+FFFD (%s)',
    async (era) => {
      const info = { name: 'bot\udc00x', version: '1' };
      const r =
        era === 'legacy'
          ? await raw(`${http.url}/mcp`, {
              headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
              body: JSON.stringify({
                jsonrpc: '2.0',
                id: 5,
                method: 'initialize',
                params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: info },
              }),
            })
          : await raw(
              `${http.url}/mcp`,
              (({ headers, body }) => ({
                headers,
                body: body.replace('"_meta":{', `"_meta":{"io.modelcontextprotocol/clientInfo":${JSON.stringify(info)},`),
              }))(modern('tools/list', { id: 5 })),
            );
      expect(r.status, r.body).toBe(400);
      expect(JSON.parse(r.body)).toMatchObject({
        id: 5,
        error: { code: -32602, message: expect.stringContaining('holds a lone surrogate at character 3') },
      });
    },
  );

  it.each(ERAS)('refuses a string id over 256 characters with id null, instead of echoing it whole (%s)', async (era) => {
    const session = era === 'legacy' ? await legacySession() : undefined;
    for (const [id, refused] of [
      ['x'.repeat(900_000), true],
      ['y'.repeat(256), false],
    ] as const) {
      const r = session
        ? await raw(`${http.url}/mcp`, { headers: session, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} }) })
        : await raw(
            `${http.url}/mcp`,
            (({ headers, body }) => ({ headers, body: body.replace('"id":1', JSON.stringify({ id }).slice(1, -1)) }))(modern('tools/list')),
          );
      if (refused) {
        expect(r.status).toBe(400);
        expect(JSON.parse(r.body)).toMatchObject({
          id: null,
          error: { code: -32600, message: expect.stringContaining('id is 900000 characters') },
        });
        expect(r.body.length).toBeLessThan(400);
      } else {
        expect(parseSse(r)).toMatchObject({ id, result: { tools: expect.any(Array) } });
      }
    }
  });

  it.each(ERAS)(
    'refuses a message of more than 10,000 object members with a short -32600, wherever they are, and serves one at the limit (%s)',
    async (era) => {
      // 80,000 distinct keys in a 1 MiB body held the event loop 2-4 s (each pass over them: the
      // SDK's parse, the screens, validation), stalling /healthz for every client.
      const session = era === 'legacy' ? await legacySession() : undefined;
      const keys = (n: number, from = 0) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${from + i}`, 1]));
      const send = (id: number, params: Record<string, unknown>, metaExtra: Record<string, unknown> = {}) => {
        if (session)
          return raw(`${http.url}/mcp`, {
            headers: session,
            body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { ...params, _meta: metaExtra } }),
          });
        const request = modern('tools/call', { params, id });
        const body = JSON.parse(request.body);
        Object.assign(body.params._meta, metaExtra);
        return raw(`${http.url}/mcp`, { headers: request.headers, body: JSON.stringify(body) });
      };
      const wide: [Record<string, unknown>, Record<string, unknown>?][] = [
        [{ name: 'send_notification', arguments: { via: 'sms', ...keys(80_000) } }],
        [{ name: 'show_banner', arguments: { text: 'x', audience: 'all', nested: [keys(5_000), keys(5_000, 5_000)] } }],
        [{ name: 'send_notification', arguments: { via: 'sms' }, ...keys(80_000) }],
        [{ name: 'send_notification', arguments: { via: 'sms' } }, keys(80_000)],
      ];
      for (const [i, [params, metaExtra]] of wide.entries()) {
        const r = await send(20 + i, params, metaExtra);
        expect(r.status, r.body.slice(0, 200)).toBe(400);
        expect(JSON.parse(r.body)).toMatchObject({
          id: 20 + i,
          error: { code: -32600, message: expect.stringContaining('more than 10000 object members') },
        });
        expect(r.body.length).toBeLessThan(400);
      }
      // At the limit (the call's own members count too): served, with the tool's coded result.
      const r = await send(30, { name: 'send_notification', arguments: { via: 'sms', ...keys(9_000) } });
      const message = parseSse(r);
      expect(message.result?.structuredContent.error.code, r.body.slice(0, 200)).toBe('FIELD_NOT_ON_CHANNEL');
    },
  );

  it('answers a megabyte tool name, resource URI, method or client name with a short -32602, not an echo of it', async () => {
    // The SDK echoed these whole (twice, in message and data) when the headers disagreed or the tool was unknown.
    const huge = 'x'.repeat(900_000);
    const session = await legacySession();
    const cases = [
      { method: 'tools/call', params: { name: huge, arguments: {} }, field: 'params.name' },
      { method: 'prompts/get', params: { name: huge }, field: 'params.name' },
      { method: 'resources/read', params: { uri: `banners://active/${huge}` }, field: 'params.uri' },
      { method: huge, params: {}, field: 'method' },
      // A client name goes into every log line and record of the call.
      {
        method: 'tools/list',
        params: { _meta: { ...meta(), 'io.modelcontextprotocol/clientInfo': { name: huge, version: '1' } } },
        field: '_meta["io.modelcontextprotocol/clientInfo"].name',
      },
      {
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: huge, version: '1' } },
        field: 'clientInfo.name',
      },
    ];
    for (const { method, params, field } of cases) {
      // A 2026-07-28 body behind the 2025 header its transport stamps (served: the body decides), and a session's call.
      const bodies = [
        {
          headers: { ...modern('tools/list').headers, 'MCP-Protocol-Version': '2025-11-25', 'Mcp-Method': 'x' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params: { _meta: meta(), ...params } }),
        },
        { headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params }) },
      ];
      for (const req of bodies) {
        delete (req.headers as Record<string, string>)['Mcp-Method'];
        const r = await raw(`${http.url}/mcp`, req);
        expect(r.body.length, `${field} ${r.body.slice(0, 120)}`).toBeLessThan(2_000);
        expect(r.json).toMatchObject({ id: 9, error: { code: -32602, message: expect.stringContaining(`${field} is`) } });
      }
    }
  });

  it('refuses a body that is not valid UTF-8 with -32700 instead of sending U+FFFD in its place; a leading BOM is read', async () => {
    const [head, tail] = modern('tools/call', {
      params: { name: 'send_notification', arguments: { via: 'sms', to: '+14155550123', body: 'Disk STRAY' } },
    }).body.split('STRAY') as [string, string];
    const { headers } = modern('tools/call', { params: { name: 'send_notification' } });
    const bad = await rawBytes(
      `${http.url}/mcp`,
      headers,
      Buffer.concat([Buffer.from(head), Buffer.from([0xc3, 0x28]), Buffer.from(tail)]),
    );
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ code: -32700, message: expect.stringContaining('UTF-8') });
    const bom = await rawBytes(
      `${http.url}/mcp`,
      headers,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(head + 'full' + tail)]),
    );
    expect(bom.json.result.structuredContent).toMatchObject({ via: 'sms', status: 'dry_run' });
  });

  it('refuses a batch or a value that is not JSON-RPC with 400 and -32600, in a session too', async () => {
    const session = await legacySession();
    const list = { jsonrpc: '2.0', id: 4, method: 'tools/list' };
    const batch = await raw(`${http.url}/mcp`, { headers: session, body: JSON.stringify([list, { ...list, id: 5 }]) });
    expect(batch.status).toBe(400);
    expect(batch.json.error).toMatchObject({ code: -32600, message: expect.stringContaining('batch') });
    const notRpc = await raw(`${http.url}/mcp`, { headers: session, body: JSON.stringify({ id: 6, hello: 'world' }) });
    expect(notRpc.status).toBe(400);
    expect(notRpc.json).toMatchObject({ id: 6, error: { code: -32600 } });
    // The session still answers.
    expect(parseSse(await raw(`${http.url}/mcp`, { headers: session, body: JSON.stringify(list) })).result.tools.length).toBeGreaterThan(0);
  });
});

describe('2025-11-25 sessions per token', () => {
  it('caps the sessions one token may hold, so one client cannot take every session', async () => {
    const app = await createApp(loadConfig(env({ NOTIFY_HTTP_TOKENS: `ops-bot:${OPS},billing-bot:${BILLING}` })), silentLogger);
    const http = await serveHttp(app, { port: 0, maxSessionsPerClient: 2 });
    const open = (token: string) =>
      raw(`${http.url}/mcp`, {
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      });
    try {
      const first = await open(OPS);
      expect((await open(OPS)).status).toBe(200);
      const third = await open(OPS);
      expect(third.status).toBe(429);
      expect(third.json.error.message).toContain('ops-bot');
      // Another token is not affected, and 2026-07-28 requests hold no session.
      expect((await open(BILLING)).status).toBe(200);
      expect((await raw(`${http.url}/mcp`, modern('tools/list', { token: OPS }))).status).toBe(200);
      // Initializes in flight together count too: billing-bot holds one, so one more of four succeeds.
      const burst = await Promise.all([1, 2, 3, 4].map(() => open(BILLING)));
      expect(burst.map((r) => r.status).sort()).toEqual([200, 429, 429, 429]);
      // Closing one makes room.
      const sid = first.headers['mcp-session-id'] as string;
      await raw(`${http.url}/mcp`, {
        method: 'DELETE',
        headers: { Authorization: `Bearer ${OPS}`, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' },
      });
      expect((await open(OPS)).status).toBe(200);
    } finally {
      await http.close();
      await app.close();
    }
  });
});

describe('cacheScope tells whether a tools/list can be shared', () => {
  it('public when no caller can get another list on that endpoint, private when clientInfo could change it', async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{}, '/mcp', 'public'],
      [{ NOTIFY_CLIENT_PROFILES: 'ops-agent=oneOf' }, '/mcp', 'private'],
      // The endpoint fixes the profile: clientInfo cannot change it.
      [{ NOTIFY_CLIENT_PROFILES: 'ops-agent=oneOf' }, '/mcp/nested', 'public'],
      // Tokens without profiles: every credential gets the same list.
      [{ NOTIFY_HTTP_TOKENS: `ops-bot:${OPS}` }, '/mcp', 'public'],
    ];
    for (const [vars, path, scope] of cases) {
      const app = await createApp(loadConfig(env(vars)), silentLogger);
      const http = await serveHttp(app, { port: 0 });
      try {
        const r = await raw(
          `${http.url}${path}`,
          modern('tools/list', { token: vars.NOTIFY_HTTP_TOKENS ? OPS : undefined, client: 'ops-agent' }),
        );
        expect(r.json.result.cacheScope, `${JSON.stringify(vars)} ${path}`).toBe(scope);
      } finally {
        await http.close();
        await app.close();
      }
    }
  });
});

/** The JSON-RPC message of a one-event SSE answer (2025 sessions answer POSTs as SSE). */
function parseSse(reply: Reply): any {
  if (reply.json) return reply.json;
  const data = reply.body.split('\n').find((l) => l.startsWith('data: '));
  return JSON.parse(data!.slice('data: '.length));
}

describe('progress over Streamable HTTP', () => {
  it.each(ERAS)("reaches a %s client on the request's own stream while a send waits on a retry", async (era) => {
    const ok = { status: 200, json: { ok: true, channel: 'C0123ABCD', ts: '1712345678.000300' } };
    const slack = await startFakePeer(ok);
    const app = await createApp(
      loadConfig(env({ SLACK_BOT_TOKEN: 'xoxb-progress', SLACK_API_URL: slack.origin, NOTIFY_SLACK_ALLOW: 'C0123ABCD' })),
      silentLogger,
    );
    const http = await serveHttp(app, { port: 0 });
    const client = eraClient(`progress-${era}`, era);
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`)));
      slack.replies.push({ status: 429, headers: { 'retry-after': '1' }, json: { ok: false, error: 'ratelimited' } }, ok);
      const heard: { progress: number; message?: string }[] = [];
      const result = await client.callTool(
        { name: 'send_notification', arguments: { via: 'slack', channel: 'C0123ABCD', text: 'deploy finished' } },
        { onprogress: (p) => void heard.push(p) },
      );
      expect(result.structuredContent).toMatchObject({ via: 'slack', status: 'sent' });
      expect(heard.length).toBeGreaterThanOrEqual(1);
      expect(heard[0]!.message).toMatch(/retrying in \d+ ms/);
    } finally {
      await client.close();
      await http.close();
      await app.close();
      await slack.close();
    }
  });
});
