/**
 * GET /banners/stream in process on port 0: the snapshot, changes from show/dismiss over MCP
 * and from expiry (within 1 s: the hub's poll period, src/banners/hub.test.ts), Last-Event-ID resume, heartbeats and retry, the 400s of
 * GET /banners, read auth with feed tokens (refused on /mcp), CORS allow/deny/preflight,
 * the cap on open streams, the slow-reader drop, and shutdown ending streams.
 */
import { connect as tcpConnect } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/core/log.js';
import { serveHttp, type HttpHandle, type HttpOptions } from '../../src/transports/http/listener.js';
import { bannerRecord } from '../helpers/banner-record.js';
import { tempDataDir } from '../helpers/cli.js';
import { raw } from '../helpers/http.js';
import { openSse, type SseReader } from '../helpers/sse.js';

const FEED_TOKEN = 'feed-reader-0123456789';
const OPS_TOKEN = 'ops-bot-token-0123456789';

interface Served {
  app: App;
  http: HttpHandle;
  readers: SseReader[];
  open(query: string, headers?: Record<string, string>): Promise<SseReader>;
  call(name: string, args: Record<string, unknown>): Promise<Record<string, any>>;
  close(): Promise<void>;
}

async function serve(env: Record<string, string> = {}, options: HttpOptions = {}, now?: () => number): Promise<Served> {
  const app = await createApp(loadConfig({ NOTIFY_DATA_DIR: tempDataDir(), ...env }), silentLogger, now ? { now } : {});
  const http = await serveHttp(app, { port: 0, ...options, stream: { pollMs: 50, ...options.stream } });
  const readers: SseReader[] = [];
  let client: Client | undefined;
  return {
    app,
    http,
    readers,
    async open(query, headers) {
      const reader = await openSse(`${http.url}/banners/stream${query}`, headers);
      readers.push(reader);
      return reader;
    },
    async call(name, args) {
      if (!client) {
        client = new Client({ name: 'stream-test', version: '1.0.0' });
        const token = env.NOTIFY_HTTP_TOKENS ? { requestInit: { headers: { Authorization: `Bearer ${OPS_TOKEN}` } } } : {};
        await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), token));
      }
      const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: Record<string, any> };
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      return result.structuredContent!;
    },
    async close() {
      for (const r of readers) r.close();
      await client?.close();
      await http.close();
      await app.close();
    },
  };
}

describe('GET /banners/stream', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({}, { stream: { heartbeatMs: 100, retryMs: 1234 } });
  });
  afterAll(() => s.close());

  it('sends retry, a snapshot of the active banners, then every show and dismiss', async () => {
    const before = await s.call('show_banner', { text: 'Payments degraded', audience: 'all', severity: 'critical' });
    await s.call('show_banner', { text: 'Not for this reader', audience: 'team:billing' });
    const reader = await s.open('?audience=all,admins');
    expect(reader.status).toBe(200);
    expect(reader.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const snapshot = await reader.nth(0);
    expect(reader.retry).toBe(1234);
    expect(snapshot.event).toBe('snapshot');
    expect(snapshot.id).toMatch(/^[0-9a-f]+-\d+-[0-9a-f]+$/);
    // The same objects as GET /banners.
    const feed = JSON.parse((await raw(`${s.http.url}/banners?audience=all,admins`)).body);
    expect(JSON.parse(snapshot.data)).toEqual({ banners: feed.banners });
    expect(feed.banners.map((b: any) => b.banner_id)).toEqual([before.banner_id]);

    const shown = await s.call('show_banner', { text: 'Maintenance at 22:00 UTC', audience: 'admins', severity: 'info' });
    await reader.nth(1, 10_000);
    const [, change] = reader.data();
    expect(change).toEqual({
      change: 'shown',
      banner: {
        banner_id: shown.banner_id,
        text: 'Maintenance at 22:00 UTC',
        audience: 'admins',
        severity: 'info',
        created_at: expect.any(String),
        expires_at: expect.any(String),
      },
    });
    expect(reader.events[1]!.event).toBe('banner');

    await s.call('dismiss_banner', { banner_id: before.banner_id });
    await reader.nth(2, 10_000);
    expect(reader.data()[2]).toMatchObject({ change: 'dismissed', banner: { banner_id: before.banner_id, audience: 'all' } });
    // Another segment's banner never reached this reader.
    await s.call('show_banner', { text: 'billing only', audience: 'team:billing' });
    await new Promise((r) => setTimeout(r, 200));
    expect(reader.events.length).toBe(3);
    // Cursors increase.
    const seqs = reader.events.map((e) => Number(e.id!.split('-')[1]));
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
  });

  it('sends `: ping` heartbeats', async () => {
    const reader = await s.open('?audience=quiet');
    await reader.until((r) => r.comments.filter((c) => c === 'ping').length >= 2, 1_000, 'two pings');
  });

  it('resumes with Last-Event-ID: the missed events only, or a snapshot for a cursor it does not know', async () => {
    const first = await s.open('?audience=resume');
    await first.nth(0);
    const a = await s.call('show_banner', { text: 'A', audience: 'resume' });
    await first.nth(1, 10_000);
    const cursor = first.events[1]!.id!;
    first.close();
    const b = await s.call('show_banner', { text: 'B', audience: 'resume' });
    await s.call('dismiss_banner', { banner_id: a.banner_id });
    // Let the hub see both changes while nobody reads.
    await new Promise((r) => setTimeout(r, 300));

    const again = await s.open('?audience=resume', { 'Last-Event-ID': cursor });
    await again.nth(1, 10_000);
    expect(again.events.map((e) => e.event)).toEqual(['banner', 'banner']);
    expect(again.data().map((d) => [d.change, d.banner.banner_id])).toEqual([
      ['shown', b.banner_id],
      ['dismissed', a.banner_id],
    ]);
    // The query parameter works as the header does (a new EventSource cannot set the header).
    const byQuery = await s.open(`?audience=resume&last_event_id=${encodeURIComponent(cursor)}`);
    await byQuery.nth(1, 10_000);
    expect(byQuery.events.map((e) => e.event)).toEqual(['banner', 'banner']);

    const stranger = await s.open('?audience=resume', { 'Last-Event-ID': 'deadbeef-3' });
    const snap = await stranger.nth(0);
    expect(snap.event).toBe('snapshot');
    expect(JSON.parse(snap.data).banners.map((x: any) => x.banner_id)).toEqual([b.banner_id]);
  });

  it("resumes a cursor with a wider audience by a snapshot that holds the added segment's active banners", async () => {
    // Another reader keeps the added segment followed, so the hub has all its events.
    const keeper = await s.open('?audience=wide-admins');
    await keeper.nth(0);
    const failover = await s.call('show_banner', { text: 'Database failover in progress', audience: 'wide-admins', severity: 'critical' });
    await keeper.nth(1, 10_000);
    const narrow = await s.open('?audience=wide-all');
    const cursor = (await narrow.nth(0)).id!;
    narrow.close();

    const wider = await s.open(`?audience=wide-all,wide-admins&last_event_id=${encodeURIComponent(cursor)}`);
    const first = await wider.nth(0, 10_000);
    expect(first.event).toBe('snapshot');
    expect(JSON.parse(first.data).banners.map((b: any) => b.banner_id)).toEqual([failover.banner_id]);
  });

  it('replays on resume only the events of the audiences the stream follows', async () => {
    const keeper = await s.open('?audience=replay-other');
    await keeper.nth(0);
    const reader = await s.open('?audience=replay-mine');
    const cursor = (await reader.nth(0)).id!;
    reader.close();
    const theirs = await s.call('show_banner', { text: 'not yours', audience: 'replay-other' });
    const ours = await s.call('show_banner', { text: 'yours', audience: 'replay-mine' });
    await keeper.nth(1, 10_000);
    await new Promise((r) => setTimeout(r, 200)); // the hub has seen both

    const resumed = await s.open('?audience=replay-mine', { 'Last-Event-ID': cursor });
    await resumed.nth(0, 10_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(resumed.events.map((e) => e.event)).toEqual(['banner']);
    expect(resumed.data().map((d) => d.banner.banner_id)).toEqual([ours.banner_id]);
    expect(JSON.stringify(resumed.events)).not.toContain(theirs.banner_id);
  });

  it('reports expiry, which writes nothing', async () => {
    const shown = await s.call('show_banner', { text: 'short', audience: 'expiry', expires_at: new Date(Date.now() + 600).toISOString() });
    const reader = await s.open('?audience=expiry');
    expect(JSON.parse((await reader.nth(0)).data).banners).toHaveLength(1);
    await reader.nth(1, 10_000);
    expect(reader.data()[1]).toMatchObject({ change: 'expired', banner: { banner_id: shown.banner_id, audience: 'expiry' } });
  });

  it('refuses a malformed audience with the 400 of GET /banners', async () => {
    const streamed = await raw(`${s.http.url}/banners/stream?audience=all,Bad!`);
    const polled = await raw(`${s.http.url}/banners?audience=all,Bad!`);
    expect(streamed.status).toBe(400);
    expect(JSON.parse(streamed.body)).toEqual(JSON.parse(polled.body));
    expect(JSON.parse(streamed.body).error).toMatchObject({ code: 'INVALID_FIELD', path: '/audience' });
  });

  it('serves no CORS headers and refuses preflights when NOTIFY_FEED_ORIGINS is unset', async () => {
    const res = await raw(`${s.http.url}/banners?audience=all`, { headers: { Origin: 'https://app.example.com' } });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const pre = await raw(`${s.http.url}/banners/stream?audience=all`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'GET' },
    });
    expect(pre.status).toBe(403);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('stream access, CORS and limits', () => {
  it('with NOTIFY_READ_AUTH=1 takes a feed token (header, or ?access_token= on the stream), which /mcp refuses', async () => {
    const s = await serve({
      NOTIFY_READ_AUTH: '1',
      NOTIFY_HTTP_TOKENS: `ops:${OPS_TOKEN}`,
      NOTIFY_FEED_TOKENS: `web:${FEED_TOKEN}`,
      NOTIFY_FEED_ORIGINS: 'https://app.example.com',
    });
    try {
      expect((await raw(`${s.http.url}/banners/stream?audience=all`)).status).toBe(401);
      // A browser app on a listed origin can read why it was refused.
      const refused = await raw(`${s.http.url}/banners/stream?audience=all`, { headers: { Origin: 'https://app.example.com' } });
      expect(refused.status).toBe(401);
      expect(refused.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect((await raw(`${s.http.url}/banners?audience=all`)).status).toBe(401);
      expect((await raw(`${s.http.url}/banners/stream?audience=all&access_token=wrong-token-0123456789`)).status).toBe(401);
      const byHeader = await s.open('?audience=all', { Authorization: `Bearer ${FEED_TOKEN}` });
      expect(byHeader.status).toBe(200);
      const byQuery = await s.open(`?audience=all&access_token=${FEED_TOKEN}`);
      expect(byQuery.status).toBe(200);
      expect((await byQuery.nth(0)).event).toBe('snapshot');
      expect((await raw(`${s.http.url}/banners?audience=all`, { headers: { Authorization: `Bearer ${FEED_TOKEN}` } })).status).toBe(200);
      // A tool token reads too, but never through the URL.
      expect((await raw(`${s.http.url}/banners?audience=all`, { headers: { Authorization: `Bearer ${OPS_TOKEN}` } })).status).toBe(200);
      expect((await raw(`${s.http.url}/banners/stream?audience=all&access_token=${OPS_TOKEN}`)).status).toBe(401);
      // The feed token cannot call tools.
      const mcp = await raw(`${s.http.url}/mcp`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${FEED_TOKEN}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
      });
      expect(mcp.status).toBe(403);
      expect(JSON.parse(mcp.body).error.message).toMatch(/read-only feed token/);
      // The tool token still works there.
      await s.call('list_banners', {});
    } finally {
      await s.close();
    }
  });

  it('grants listed origins on the feed paths, answers their preflight, and denies others', async () => {
    const s = await serve({ NOTIFY_FEED_ORIGINS: 'https://app.example.com,http://localhost:3000' });
    try {
      const allowed = await raw(`${s.http.url}/banners?audience=all`, { headers: { Origin: 'https://app.example.com' } });
      expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(allowed.headers.vary).toMatch(/Origin/);
      const stream = await s.open('?audience=all', { Origin: 'http://localhost:3000' });
      expect(stream.response.headers['access-control-allow-origin']).toBe('http://localhost:3000');
      const denied = await raw(`${s.http.url}/banners?audience=all`, { headers: { Origin: 'https://evil.example.com' } });
      expect(denied.status).toBe(200);
      expect(denied.headers['access-control-allow-origin']).toBeUndefined();

      const pre = await raw(`${s.http.url}/banners/stream?audience=all`, {
        method: 'OPTIONS',
        headers: {
          Origin: 'https://app.example.com',
          'Access-Control-Request-Method': 'GET',
          'Access-Control-Request-Headers': 'authorization,last-event-id',
        },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(pre.headers['access-control-allow-headers']).toMatch(/Authorization/);
      expect(pre.headers['access-control-allow-headers']).toMatch(/Last-Event-ID/);
      const deniedPre = await raw(`${s.http.url}/banners/stream?audience=all`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://evil.example.com', 'Access-Control-Request-Method': 'GET' },
      });
      expect(deniedPre.status).toBe(403);
      expect(deniedPre.headers['access-control-allow-origin']).toBeUndefined();
      // /mcp is not part of the feed: no CORS grant there.
      const mcpPre = await raw(`${s.http.url}/mcp`, { method: 'OPTIONS', headers: { Origin: 'https://app.example.com' } });
      expect(mcpPre.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  it('caps open streams with 503 and Retry-After, and admits again once one closes', async () => {
    // One client here: its share is the whole cap, so the process's cap is what refuses.
    const s = await serve({ NOTIFY_FEED_MAX_STREAMS: '2', NOTIFY_FEED_CLIENT_STREAMS: '2' });
    try {
      const a = await s.open('?audience=all');
      await s.open('?audience=all');
      const third = await raw(`${s.http.url}/banners/stream?audience=all`);
      expect(third.status).toBe(503);
      expect(third.headers['retry-after']).toBe('5');
      expect(JSON.parse(third.body).error.code).toBe('TOO_MANY_STREAMS');
      a.close();
      await expect.poll(() => s.http.streamCount()).toBe(1);
      expect((await s.open('?audience=all')).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('drops a reader that does not read once its unsent bytes pass the bound', async () => {
    const s = await serve({}, { stream: { maxBufferedBytes: 128 * 1024 } });
    try {
      const fast = await s.open('?audience=flood');
      // A raw socket that sends the request and then never reads.
      const slow = tcpConnect(s.http.port, '127.0.0.1');
      slow.write(`GET /banners/stream?audience=flood HTTP/1.1\r\nHost: 127.0.0.1:${s.http.port}\r\n\r\n`);
      slow.pause();
      let slowClosed = false;
      slow.on('close', () => (slowClosed = true));
      await expect.poll(() => s.http.streamCount()).toBe(2);
      // Straight into the store (as another replica would write): 50 banners of 490 characters
      // shown and dismissed per round, about 70 kB of events, until the kernel's buffers are full.
      const text = 'x'.repeat(490);
      let rounds = 0;
      for (; rounds < 500 && !slowClosed && s.http.streamCount() > 1; rounds++) {
        const ids: string[] = [];
        for (let i = 0; i < 50; i++) {
          const b = await s.app.store.insertBanner(bannerRecord(Date.now(), { text, audience: 'flood' }));
          ids.push(b.id);
        }
        await new Promise((r) => setTimeout(r, 60));
        for (const id of ids) await s.app.store.dismissBanner(id, Date.now());
        await new Promise((r) => setTimeout(r, 60));
      }
      await expect.poll(() => s.http.streamCount(), { timeout: 2_000 }).toBe(1);
      // The reader that reads is still there and got every change.
      expect(fast.ended).toBe(false);
      await fast.until((r) => r.events.length === 1 + rounds * 100, 2_000, 'every change');
      slow.destroy();
    } finally {
      await s.close();
    }
  }, 60_000);

  it('ends every stream cleanly when the server shuts down', async () => {
    const s = await serve();
    const reader = await s.open('?audience=all');
    await reader.nth(0);
    const closing = s.http.close();
    await reader.until((r) => r.ended, 2_000, 'end of stream');
    expect(reader.response.complete).toBe(true);
    await closing;
    await s.app.close();
  });
});
