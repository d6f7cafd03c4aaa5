/**
 * Streamable HTTP end to end, in process on port 0, driven by the v2 SDK's Client as a
 * 2025-11-25 client (sessions) and pinned to 2026-07-28 (stateless): tokens, the profile
 * precedence (credential, endpoint, clientInfo, default), rate limits, the body bound, Host
 * and Origin checks, sessions, the banner feed and metrics. The header and status rules of
 * 2026-07-28 are in http-protocol.test.ts.
 */
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/core/log.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { openSqliteStore, sqliteFile } from '../../src/store/sqlite/store.js';
import { ERAS, eraClient, type Era } from '../helpers/mcp-cli.js';

const TOKENS = {
  ops: 'ops-token-0123456789abcdef',
  billing: 'billing-token-0123456789ab',
  pager: 'pager-token-0123456789abcd',
};

function env(extra: Record<string, string> = {}): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'notify-http-'));
  return { NOTIFY_DATA_DIR: dir, HOME: dir, ...extra };
}

/** The HTTP status the SDK client saw (SdkHttpError.status), or the error itself. */
async function statusOf(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (err) {
    return (err as { status?: unknown }).status ?? err;
  }
  return 'resolved';
}

type Sent = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** Raw node:http, so that Host and Origin can be set to anything. */
function raw(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

describe('HTTP transport', () => {
  const logLines: string[] = [];
  let app: App;
  let http: HttpHandle;
  const clients: Client[] = [];

  async function connect(opts: { token?: string; path?: string; name?: string; era?: Era } = {}): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(`${http.url}${opts.path ?? '/mcp'}`), {
      requestInit: opts.token ? { headers: { Authorization: `Bearer ${opts.token}` } } : undefined,
    });
    const client = eraClient(opts.name ?? 'e2e', opts.era ?? 'legacy');
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe(opts.era ?? 'legacy');
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    const config = loadConfig(
      env({
        NOTIFY_HTTP_TOKENS: `ops-bot:${TOKENS.ops},billing-bot:${TOKENS.billing}:nested,pager:${TOKENS.pager}`,
        NOTIFY_CLIENT_PROFILES: 'ops-agent=oneOf',
        NOTIFY_RATE_LIMITS: 'sms=2/h',
      }),
    );
    app = await createApp(
      config,
      createLogger('debug', (line) => void logLines.push(line)),
    );
    http = await serveHttp(app, { port: 0 });
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await http?.close();
    await app?.close();
  });

  it('logs the bound URL', () => {
    expect(http.port).toBeGreaterThan(0);
    expect(logLines.some((l) => l.includes('"serving http"') && l.includes(`${http.url}/mcp`))).toBe(true);
  });

  it.each(ERAS)('accepts a configured token and refuses a missing or wrong one with 401 and WWW-Authenticate (%s client)', async (era) => {
    const client = await connect({ token: TOKENS.ops, era });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);

    expect(await statusOf(connect({ era }))).toBe(401);
    expect(await statusOf(connect({ token: 'wrong-token-0123456789abcdef', era }))).toBe(401);

    const missing = await raw(`${http.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: INIT });
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="notify-mcp"');
    const wrong = await raw(`${http.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${TOKENS.ops}x` },
      body: INIT,
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toMatch(/^Bearer realm="notify-mcp", error="invalid_token"/);
    const basic = await raw(`${http.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: 'Basic b3BzOng=' },
      body: INIT,
    });
    expect(basic.status).toBe(401);
  });

  it.each(ERAS)('chooses the profile by token, then path, then clientInfo, then the default (%s client)', async (era) => {
    const shape = async (client: Client) => {
      const { tools } = await client.listTools();
      const send = tools.find((t) => t.name.startsWith('send_'))!;
      if (send.name !== 'send_notification') return 'per-channel';
      const schema = send.inputSchema as Record<string, unknown> & { properties?: Record<string, unknown> };
      if (schema.properties && 'notification' in schema.properties) return 'nested';
      if ('oneOf' in schema) return 'oneOf';
      return 'flat';
    };
    // Credential: billing-bot's token carries nested, which beats the path and clientInfo.
    expect(await shape(await connect({ token: TOKENS.billing, path: '/mcp/per-channel', name: 'ops-agent', era }))).toBe('nested');
    // Endpoint: beats clientInfo.
    expect(await shape(await connect({ token: TOKENS.ops, path: '/mcp/per-channel', name: 'ops-agent', era }))).toBe('per-channel');
    expect(await shape(await connect({ token: TOKENS.ops, path: '/mcp/oneOf', era }))).toBe('oneOf');
    // clientInfo.name through NOTIFY_CLIENT_PROFILES.
    expect(await shape(await connect({ token: TOKENS.ops, name: 'ops-agent', era }))).toBe('oneOf');
    // Default.
    expect(await shape(await connect({ token: TOKENS.ops, name: 'someone', era }))).toBe('flat');

    const unknown = await raw(`${http.url}/mcp/openai`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${TOKENS.ops}` },
      body: INIT,
    });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error.message).toContain('Unknown profile "openai"');
  });

  it('records the token client in the delivery log and in log lines, and rate-limits per client and channel (2026-07-28 client)', async () => {
    const ops = await connect({ token: TOKENS.ops, name: 'self-reported-name', era: 'modern' });
    const sms = { via: 'sms', to: '+14155550123', body: 'Disk full on db-1' };
    const first = await ops.callTool({ name: 'send_notification', arguments: sms });
    expect(first.isError, JSON.stringify(first)).toBeFalsy();
    const id = (first.structuredContent as { id: string }).id;
    const record = (await app.store.listDeliveries(50)).find((r) => r.id === id);
    expect(record?.client).toBe('ops-bot');
    expect(logLines.some((l) => l.includes(id) && l.includes('"client":"ops-bot"'))).toBe(true);

    expect((await ops.callTool({ name: 'send_notification', arguments: sms })).isError).toBeFalsy();
    const limited = await ops.callTool({ name: 'send_notification', arguments: sms });
    expect(limited.isError).toBe(true);
    const error = (limited.structuredContent as { error: { code: string; retry_after_s: number; via: string } }).error;
    expect(error).toMatchObject({ code: 'RATE_LIMITED', via: 'sms' });
    expect(error.retry_after_s).toBeGreaterThan(3500);
    expect(error.retry_after_s).toBeLessThanOrEqual(3600);

    // Email is another channel; pager is another client.
    const email = await ops.callTool({
      name: 'send_notification',
      arguments: { via: 'email', to: 'ops@example.com', subject: 'x', body_html: '<p>x</p>' },
    });
    expect(email.isError).toBeFalsy();
    const pager = await connect({ token: TOKENS.pager, era: 'modern' });
    expect((await pager.callTool({ name: 'send_notification', arguments: sms })).isError).toBeFalsy();
    // A 2025-era session of the same token shares its limit: the limit is the client's, not the session's.
    const legacy = await connect({ token: TOKENS.ops, era: 'legacy' });
    expect((await legacy.callTool({ name: 'send_notification', arguments: sms })).structuredContent).toMatchObject({
      error: { code: 'RATE_LIMITED' },
    });
  });

  it.each(ERAS)(
    'answers 413 to a body over the message cap (1 MiB plus the attachment allowance), declared or streamed (%s client)',
    async (era) => {
      const client = await connect({ token: TOKENS.ops, era });
      const huge = { via: 'email', to: 'ops@example.com', subject: 'big', body_html: `<p>${'x'.repeat(5 * 1024 * 1024)}</p>` };
      expect(await statusOf(client.callTool({ name: 'send_notification', arguments: huge }))).toBe(413);

      // Chunked, no Content-Length: counted as it arrives.
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const streamed = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          `${http.url}/mcp`,
          {
            method: 'POST',
            headers: { ...MCP_HEADERS, Authorization: `Bearer ${TOKENS.ops}`, 'Transfer-Encoding': 'chunked' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.on('error', reject);
        let sent = 0;
        const pump = () => {
          while (sent < 6 * 1024 * 1024) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end();
        };
        pump();
      });
      expect(streamed).toBe(413);
      // The server is still fine afterwards.
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    },
  );

  it('refuses a foreign Host (DNS rebinding) and a foreign Origin with 403', async () => {
    const headers = { ...MCP_HEADERS, Authorization: `Bearer ${TOKENS.ops}` };
    const evilHost = await raw(`${http.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, Host: `evil.example.com:${http.port}` },
      body: INIT,
    });
    expect(evilHost.status).toBe(403);
    const wrongPort = await raw(`${http.url}/healthz`, { headers: { Host: `localhost:${http.port + 1}` } });
    expect(wrongPort.status).toBe(403);
    const evilOrigin = await raw(`${http.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, Origin: 'http://evil.example.com' },
      body: INIT,
    });
    expect(evilOrigin.status).toBe(403);
    const otherLocalApp = await raw(`${http.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, Origin: `http://localhost:${http.port + 1}` },
      body: INIT,
    });
    expect(otherLocalApp.status).toBe(403);
    const sameOrigin = await raw(`${http.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, Host: `localhost:${http.port}`, Origin: `http://localhost:${http.port}` },
      body: INIT,
    });
    expect(sameOrigin.status).toBe(200);
  });

  it('binds a session to its credential and endpoint, and closes it on DELETE', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${TOKENS.ops}` } },
    });
    const client = new Client({ name: 'e2e', version: '1' });
    await client.connect(transport);
    const sid = transport.sessionId!;
    expect(sid).toBeTruthy();
    const before = http.sessionCount();
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' });
    const asOther = await raw(`${http.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${TOKENS.pager}`, 'Mcp-Session-Id': sid, 'Mcp-Protocol-Version': '2025-06-18' },
      body: ping,
    });
    expect(asOther.status).toBe(404);
    const otherPath = await raw(`${http.url}/mcp/nested`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${TOKENS.ops}`, 'Mcp-Session-Id': sid, 'Mcp-Protocol-Version': '2025-06-18' },
      body: ping,
    });
    expect(otherPath.status).toBe(404);
    await transport.terminateSession();
    expect(http.sessionCount()).toBe(before - 1);
    await client.close();
  });

  it('serves the banner feed with ETag and max-age, reflecting show_banner and dismiss_banner', async () => {
    const feed = (etag?: string) =>
      raw(`${http.url}/banners?audience=team:feed,admins`, { headers: etag ? { 'If-None-Match': etag } : {} });
    const empty = await feed();
    expect(empty.status).toBe(200);
    expect(JSON.parse(empty.body).banners).toEqual([]);
    const emptyTag = empty.headers.etag as string;
    expect(emptyTag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(empty.headers['cache-control']).toBe('public, max-age=5');
    expect((await feed(emptyTag)).status).toBe(304);

    const client = await connect({ token: TOKENS.ops });
    const shown = await client.callTool({
      name: 'show_banner',
      arguments: { text: 'Maintenance at 22:00 UTC', audience: 'team:feed', severity: 'warning' },
    });
    expect(shown.isError, JSON.stringify(shown)).toBeFalsy();
    const bannerId = (shown.structuredContent as { banner_id: string }).banner_id;

    const withBanner = await feed(emptyTag);
    expect(withBanner.status).toBe(200);
    expect(JSON.parse(withBanner.body).banners).toEqual([
      expect.objectContaining({ banner_id: bannerId, text: 'Maintenance at 22:00 UTC', audience: 'team:feed', severity: 'warning' }),
    ]);
    const tag = withBanner.headers.etag as string;
    expect(tag).not.toBe(emptyTag);
    expect((await feed(tag)).status).toBe(304);
    expect((await feed(`W/${tag}, "other"`)).status).toBe(304);
    // Exact segment names: another team sees nothing.
    expect(JSON.parse((await raw(`${http.url}/banners?audience=team:other`)).body).banners).toEqual([]);

    const dismissed = await client.callTool({ name: 'dismiss_banner', arguments: { banner_id: bannerId } });
    expect(dismissed.isError).toBeFalsy();
    const after = await feed(tag);
    expect(after.status).toBe(200);
    expect(JSON.parse(after.body).banners).toEqual([]);

    // A repeat is the same bytes and tag (served from the feed cache), and a banner written
    // by another process on the same SQLite file shows at once, not after a cache lifetime.
    const repeat = await feed();
    expect(repeat.body).toBe(after.body);
    expect(repeat.headers.etag).toBe(after.headers.etag);
    const otherProcess = await openSqliteStore({ file: sqliteFile(app.config.dataDir), log: createLogger('error', () => {}) });
    try {
      await otherProcess.insertBanner({
        id: 'bnr_from_another_process',
        text: 'Written elsewhere',
        audience: 'admins',
        severity: 'info',
        dedupe_key: null,
        created_at: app.now(),
        expires_at: null,
        dismissed_at: null,
      });
    } finally {
      await otherProcess.close();
    }
    const elsewhere = await feed(repeat.headers.etag as string);
    expect(elsewhere.status).toBe(200);
    expect(JSON.parse(elsewhere.body).banners.map((b: { banner_id: string }) => b.banner_id)).toEqual(['bnr_from_another_process']);

    const bad = await raw(`${http.url}/banners?audience=Not%20A%20Segment`);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe('INVALID_FIELD');
  });

  it('serves /healthz and Prometheus /metrics without a token', async () => {
    const health = await raw(`${http.url}/healthz`);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ ok: true });
    const metrics = await raw(`${http.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    expect(metrics.body).toMatch(/notify_tool_calls_total\{tool="send_notification",outcome="ok"\} [1-9]/);
    expect(metrics.body).toMatch(/notify_tool_calls_total\{tool="send_notification",outcome="RATE_LIMITED"\} 2/);
    expect(metrics.body).toMatch(/notify_send_duration_seconds_count\{via="sms",outcome="ok"\} [1-9]/);
    expect(metrics.body).toMatch(/notify_http_requests_total\{route="mcp",method="POST",status="401"\} [1-9]/);
    expect(metrics.body).toMatch(/notify_mcp_sessions_active [1-9]/);
    expect((await raw(`${http.url}/nope`)).status).toBe(404);
    expect((await raw(`${http.url}/healthz`, { method: 'POST' })).status).toBe(405);
  });
});

describe('HTTP transport without tokens', () => {
  it('refuses to bind beyond loopback, naming NOTIFY_HTTP_TOKENS', async () => {
    const app = await createApp(
      loadConfig(env()),
      createLogger('error', () => {}),
    );
    try {
      await expect(serveHttp(app, { host: '0.0.0.0', port: 0 })).rejects.toThrow(ConfigError);
      await expect(serveHttp(app, { host: '0.0.0.0', port: 0 })).rejects.toThrow(/NOTIFY_HTTP_TOKENS/);
      // Loopback without tokens works, and /mcp needs no token.
      const http = await serveHttp(app, { host: '127.0.0.1', port: 0 });
      const client = new Client({ name: 'anon', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`)));
      expect((await client.listTools()).tools[0]!.name).toBe('send_notification');
      await client.close();
      await http.close();
    } finally {
      await app.close();
    }
  });

  it('closes idle sessions', async () => {
    const app = await createApp(
      loadConfig(env()),
      createLogger('error', () => {}),
    );
    const http = await serveHttp(app, { port: 0, sessionIdleMs: 300 });
    try {
      const client = new Client({ name: 'idle', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`)));
      expect(http.sessionCount()).toBe(1);
      await new Promise((r) => setTimeout(r, 2_500));
      expect(http.sessionCount()).toBe(0);
      expect(await statusOf(client.listTools())).toBe(404);
      await client.close();
    } finally {
      await http.close();
      await app.close();
    }
  });
});

describe('HTTP server timeouts', () => {
  it('drops a client that never finishes its headers, but keeps an open GET stream', async () => {
    const app = await createApp(
      loadConfig(env()),
      createLogger('error', () => {}),
    );
    const http = await serveHttp(app, { port: 0, headersTimeoutMs: 400, requestTimeoutMs: 800 });
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = tcpConnect(http.port, '127.0.0.1', () => socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${http.port}\r\n`));
        let data = '';
        socket.setEncoding('utf8').on('data', (c: string) => (data += c));
        socket.on('close', () => resolve(data));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408/);

      // The standalone SSE stream outlives requestTimeout: the request itself was complete.
      const client = new Client({ name: 'stream', version: '1' });
      const transport = new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`));
      const errors: Error[] = [];
      client.onerror = (e) => void errors.push(e);
      await client.connect(transport);
      await new Promise((r) => setTimeout(r, 2_000));
      expect(errors).toEqual([]);
      expect(await client.ping()).toEqual({});
      await client.close();
    } finally {
      await http.close();
      await app.close();
    }
  });
});

describe('HTTP transport with NOTIFY_READ_AUTH=1', () => {
  it('asks read endpoints for a token too, and marks the feed private', async () => {
    const app = await createApp(
      loadConfig(env({ NOTIFY_HTTP_TOKENS: `ops-bot:${TOKENS.ops}`, NOTIFY_READ_AUTH: '1' })),
      createLogger('error', () => {}),
    );
    const http = await serveHttp(app, { port: 0 });
    try {
      for (const path of ['/healthz', '/metrics', '/banners?audience=all']) {
        const refused = await raw(`${http.url}${path}`);
        expect(refused.status, path).toBe(401);
        expect(refused.headers['www-authenticate']).toBe('Bearer realm="notify-mcp"');
        expect((await raw(`${http.url}${path}`, { headers: { Authorization: `Bearer ${TOKENS.ops}` } })).status, path).toBe(200);
      }
      const feed = await raw(`${http.url}/banners?audience=all`, { headers: { Authorization: `Bearer ${TOKENS.ops}` } });
      expect(feed.headers['cache-control']).toBe('private, max-age=5');
      expect(feed.headers.vary).toBe('Authorization');
    } finally {
      await http.close();
      await app.close();
    }
  });
});
