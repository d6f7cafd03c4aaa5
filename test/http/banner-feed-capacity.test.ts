/**
 * The live feed's capacity on every path into it: GET /banners/stream (what the widget
 * reads), 2026-07-28 subscriptions/listen over HTTP and stdio, 2025-11-25 resources/subscribe.
 * No request names more than 32 segments; each client (token, or address when anonymous)
 * follows at most its share, so no one client locks others out; a full hub is a coded
 * refusal (never a 500, never a stack in the log). Clients are told apart by source
 * address: 127.0.0.1, 127.0.0.2, … are all loopback.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { bannerHubFor } from '../../src/banners/hub.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/core/log.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { ChildStdioTransport, cliEnv, tempDataDir } from '../helpers/cli.js';
import { assertBuilt, eraClient, MODERN_VERSION, rawStdio } from '../helpers/mcp-cli.js';
import { SseReader } from '../helpers/sse.js';

interface Served {
  app: App;
  http: HttpHandle;
  logs: string[];
  close(): Promise<void>;
}

const opened: { close(): void }[] = [];
let served: Served | undefined;

/** `hub`: the hub's caps, made before the server so that it is the one the server uses. */
async function serve(hub?: { maxSegments: number; segmentsPerClient: number }, env: Record<string, string> = {}): Promise<Served> {
  const logs: string[] = [];
  const log = createLogger('debug', (line) => void logs.push(line));
  const app = await createApp(loadConfig({ NOTIFY_DATA_DIR: tempDataDir(), ...env }), log);
  if (hub) bannerHubFor(app.store, { ...hub, pollMs: 50, log });
  const http = await serveHttp(app, { port: 0, stream: { pollMs: 50 } }, log);
  served = {
    app,
    http,
    logs,
    async close() {
      for (const o of opened.splice(0)) o.close();
      await http.close();
      await app.close();
    },
  };
  return served;
}

afterEach(async () => {
  await served?.close();
  served = undefined;
});

const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'viewer', version: '1' },
};

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** GET /banners/stream from `from`: a reader once admitted, else the refusal as sent. */
function stream(s: Served, audience: string, from = '127.0.0.1', method = 'GET'): Promise<SseReader | Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${s.http.url}/banners/stream?audience=${audience}`,
      { method, localAddress: from, headers: { Accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode === 200 && method === 'GET') {
          const reader = new SseReader(res);
          opened.push(reader);
          return resolve(reader);
        }
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const isReader = (x: SseReader | Answer): x is SseReader => x instanceof SseReader;

/** A 2026-07-28 subscriptions/listen from `from`: its JSON-RPC error, or the open listen. */
function listen(
  s: Served,
  uris: string[],
  from = '127.0.0.1',
): Promise<{ status: number; error?: { code: number; message: string; data?: Record<string, any> }; close(): void }> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'subscriptions/listen',
    params: {
      notifications: { resourceSubscriptions: uris },
      _meta: META,
    },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      `${s.http.url}/mcp`,
      {
        method: 'POST',
        localAddress: from,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': MODERN_VERSION,
          'Mcp-Method': 'subscriptions/listen',
        },
      },
      (res) => {
        const close = () => req.destroy();
        if (!String(res.headers['content-type']).startsWith('application/json')) {
          opened.push({ close });
          return resolve({ status: res.statusCode!, close });
        }
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, error: (JSON.parse(text) as { error?: any }).error, close }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const segments = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const uris = (prefix: string, n: number) => segments(prefix, n).map((a) => `banners://active/${a}`);
const stacks = (s: Served) => s.logs.filter((l) => /http request failed|"stack"|\\n {4}at /.test(l));

describe('the live feed gives each client its own share', () => {
  it('32 anonymous streams of 32 fresh segments from one address: refused past its share, others still get a snapshot', async () => {
    const s = await serve();
    const answers: (SseReader | Answer)[] = [];
    for (let i = 0; i < 32; i++) answers.push(await stream(s, segments(`hog${i}x`, 32).join(',')));
    const admitted = answers.filter(isReader);
    // The default share is a quarter of the 1,000 segments: 7 streams of 32.
    expect(admitted).toHaveLength(7);
    for (const r of admitted) await r.nth(0);
    const refused = answers.filter((a): a is Answer => !isReader(a));
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.headers['retry-after']).toBe('5');
      expect(JSON.parse(r.body).error).toMatchObject({ code: 'FEED_CLIENT_LIMIT', retry_after_s: 5 });
    }
    // Its segments already followed cost it nothing more.
    expect(isReader(await stream(s, segments('hog0x', 32).join(',')))).toBe(true);

    const viewer = await stream(s, 'all,team:billing', '127.0.0.2');
    expect(isReader(viewer)).toBe(true);
    expect((await (viewer as SseReader).nth(0)).event).toBe('snapshot');
    // The same client by MCP: its share is spent there too.
    expect((await listen(s, uris('fresh', 32))).error?.data).toMatchObject({ code: 'FEED_CLIENT_LIMIT' });
    // Ended, its streams give the share back.
    for (const r of admitted) r.close();
    await expect.poll(async () => isReader(await stream(s, segments('fresh', 32).join(',')))).toBe(true);
    expect(stacks(s)).toEqual([]);
  });

  it('one listen cannot fill the feed: 33 or 1,001 URIs are TOO_LONG, a client of many listens stops at its share', async () => {
    const s = await serve();
    for (const n of [33, 1_000, 1_001]) {
      const answer = await listen(s, uris(`l${n}x`, n));
      expect(answer.status).toBe(200);
      expect(answer.error).toMatchObject({ code: -32602, data: { code: 'TOO_LONG' } });
      expect(answer.error!.message).toMatch(/at most 32/);
    }
    // What an SDK client makes of it: a ProtocolError carrying the code.
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const sdk = eraClient('listener', 'modern');
    await sdk.connect(new StreamableHTTPClientTransport(new URL(`${s.http.url}/mcp`)));
    try {
      await expect(sdk.listen({ resourceSubscriptions: uris('sdk', 33) })).rejects.toMatchObject({
        code: -32602,
        data: { code: 'TOO_LONG' },
      });
    } finally {
      await sdk.close();
    }
    const held = [];
    for (let i = 0; i < 7; i++) {
      const l = await listen(s, uris(`m${i}x`, 32));
      expect(l.error).toBeUndefined();
      held.push(l);
    }
    const over = await listen(s, uris('m7x', 32));
    expect(over.error).toMatchObject({ code: -32000, data: { code: 'FEED_CLIENT_LIMIT', retry_after_s: 5 } });
    // A viewer from elsewhere, on either path.
    const viewer = await stream(s, 'team:support', '127.0.0.2');
    expect(isReader(viewer)).toBe(true);
    expect((await listen(s, ['banners://active/team:support'], '127.0.0.3')).error).toBeUndefined();
    expect(stacks(s)).toEqual([]);
  });

  it('a full hub is a coded refusal on every path: SSE 503 FEED_FULL (GET and HEAD), listen and resources/subscribe errors', async () => {
    // The legacy client below connects from 127.0.0.1, which follows nothing else.
    const s = await serve({ maxSegments: 40, segmentsPerClient: 32 });
    const a = await stream(s, segments('a', 32).join(','), '127.0.0.4');
    expect(isReader(a)).toBe(true);
    expect((await listen(s, uris('b', 8), '127.0.0.2')).error).toBeUndefined();
    // 40 followed: one fresh segment more is refused for everyone, whoever asks, however.
    for (const method of ['GET', 'HEAD']) {
      const refused = (await stream(s, 'c0', '127.0.0.3', method)) as Answer;
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      if (method === 'GET') expect(JSON.parse(refused.body).error).toMatchObject({ code: 'FEED_FULL', retry_after_s: 5 });
    }
    expect((await listen(s, ['banners://active/c0'], '127.0.0.3')).error).toMatchObject({ code: -32000, data: { code: 'FEED_FULL' } });

    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const legacy = new Client({ name: 'legacy-viewer', version: '1' });
    await legacy.connect(new StreamableHTTPClientTransport(new URL(`${s.http.url}/mcp`)));
    try {
      const err = await legacy.subscribeResource({ uri: 'banners://active/c0' }).then(
        () => undefined,
        (e: unknown) => e as { code?: number; data?: Record<string, unknown> },
      );
      expect(err).toMatchObject({ code: -32000, data: { code: 'FEED_FULL' } });
      // Segments already followed need no room.
      await legacy.subscribeResource({ uri: 'banners://active/a0' });
    } finally {
      await legacy.close();
    }
    // Still serving: the room comes back when a follower leaves.
    (a as SseReader).close();
    await expect.poll(async () => isReader(await stream(s, 'c0', '127.0.0.3'))).toBe(true);
    expect(stacks(s)).toEqual([]);
  });
});

describe('each client gets its own share of the open streams too', () => {
  it('one client holds at most a quarter of NOTIFY_FEED_MAX_STREAMS (SSE and listens together): 429 FEED_CLIENT_LIMIT, another client still gets a stream', async () => {
    // 8 streams in all, a share of 2 each by default; one segment, so the segment share is never what refuses.
    const s = await serve(undefined, { NOTIFY_FEED_MAX_STREAMS: '8' });
    const first = await stream(s, 'all');
    expect(isReader(first)).toBe(true);
    expect((await listen(s, ['banners://active/all'])).error).toBeUndefined();
    // Its share is spent, on either path, whatever it names.
    for (const method of ['GET', 'HEAD']) {
      const refused = (await stream(s, 'all', '127.0.0.1', method)) as Answer;
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('5');
      if (method === 'GET') {
        const error = JSON.parse(refused.body).error;
        expect(error).toMatchObject({ code: 'FEED_CLIENT_LIMIT', retry_after_s: 5 });
        expect(error.message).toMatch(/2 open streams.*NOTIFY_FEED_CLIENT_STREAMS/);
      }
    }
    expect((await listen(s, ['banners://active/all'])).error).toMatchObject({
      code: -32000,
      data: { code: 'FEED_CLIENT_LIMIT', retry_after_s: 5 },
    });
    // Another client (another address) still gets a stream, on either path.
    const other = await stream(s, 'all', '127.0.0.2');
    expect(isReader(other)).toBe(true);
    expect((await (other as SseReader).nth(0)).event).toBe('snapshot');
    expect((await listen(s, ['banners://active/all'], '127.0.0.2')).error).toBeUndefined();
    // Ended, a stream gives its place back.
    (first as SseReader).close();
    await expect.poll(async () => isReader(await stream(s, 'all'))).toBe(true);
    expect(stacks(s)).toEqual([]);
  });

  it('four clients of a share each fill the process: the fifth gets 503 TOO_MANY_STREAMS on both paths; the share is NOTIFY_FEED_CLIENT_STREAMS when set', async () => {
    const s = await serve(undefined, { NOTIFY_FEED_MAX_STREAMS: '4', NOTIFY_FEED_CLIENT_STREAMS: '3' });
    for (let i = 0; i < 3; i++) expect(isReader(await stream(s, 'all'))).toBe(true);
    expect(((await stream(s, 'all')) as Answer).status).toBe(429);
    expect(isReader(await stream(s, 'all', '127.0.0.2'))).toBe(true);
    const full = (await stream(s, 'all', '127.0.0.3')) as Answer;
    expect(full.status).toBe(503);
    expect(JSON.parse(full.body).error).toMatchObject({ code: 'TOO_MANY_STREAMS', retry_after_s: 5 });
    expect((await listen(s, ['banners://active/all'], '127.0.0.3')).error).toMatchObject({
      code: -32000,
      data: { code: 'TOO_MANY_STREAMS' },
    });
    expect(stacks(s)).toEqual([]);
  });
});

describe('over stdio', () => {
  it('refuses a listen of more than 32 URIs with a JSON-RPC error, and keeps serving', async () => {
    assertBuilt();
    const transport = new ChildStdioTransport([], cliEnv({ NOTIFY_DATA_DIR: tempDataDir() }));
    try {
      const rpc = await rawStdio(transport);
      const _meta = META;
      for (const n of [33, 1_001]) {
        const answer = await rpc.request('subscriptions/listen', { notifications: { resourceSubscriptions: uris(`s${n}x`, n) }, _meta });
        expect(answer.error).toMatchObject({ code: -32602, data: { code: 'TOO_LONG' } });
      }
      const listed = await rpc.request('resources/templates/list', { _meta });
      expect(listed.result.resourceTemplates).toHaveLength(1);
    } finally {
      await transport.close();
    }
  });

  it('ends the watch of a listen the SDK answered: refused listens take no share', async () => {
    assertBuilt();
    const transport = new ChildStdioTransport([], cliEnv({ NOTIFY_DATA_DIR: tempDataDir() }));
    try {
      const rpc = await rawStdio(transport);
      // No clientCapabilities: the SDK refuses each, 9 × 32 URIs, more than the share of 250.
      const noCapabilities = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION };
      for (let i = 0; i < 9; i++) {
        const refused = await rpc.request('subscriptions/listen', {
          notifications: { resourceSubscriptions: uris(`bad${i}x`, 32) },
          _meta: noCapabilities,
        });
        expect(refused.error).toMatchObject({ code: -32602 });
        expect(refused.error.data?.code).toBeUndefined();
      }
      const ack = new Promise<Record<string, any>>((resolve) => {
        const previous = transport.onmessage;
        transport.onmessage = (m) => {
          previous?.(m);
          if ((m as { method?: string }).method === 'notifications/subscriptions/acknowledged') resolve(m as Record<string, any>);
        };
      });
      const answered = rpc.request('subscriptions/listen', { notifications: { resourceSubscriptions: uris('good', 32) }, _meta: META });
      const first = await Promise.race([ack, answered]);
      expect(first).toMatchObject({
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { resourceSubscriptions: uris('good', 32) } },
      });
    } finally {
      await transport.close();
    }
  });
});
