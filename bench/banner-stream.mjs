/**
 * Row 7: the live feed at 1,000 open streams on one `notify-mcp --http` process. Every
 * stream is a raw GET /banners/stream from this process (no agent pooling); a show_banner
 * over MCP must reach all of them. Delivery latency is from just before the call to the
 * stream's `shown` event for that banner, per stream; p50 and p99 per round, median and
 * min–max over rounds. Memory per stream: the server's RSS (process_resident_memory_bytes
 * from /metrics) with the streams open, minus before, over the stream count.
 */
import { execSync } from 'node:child_process';
import { request } from 'node:http';
import { connectHttp, serverEnv, startHttpServer, tempDir } from './lib/servers.mjs';
import { exact, quantile, sleep, summarize } from './lib/stats.mjs';

export const STREAMS = 1_000;

/** Open files a process may hold here; 1,000 streams need 1,000 sockets on each side. */
function fdLimit() {
  try {
    return Number(execSync('ulimit -n', { shell: '/bin/sh', encoding: 'utf8' }).trim());
  } catch {
    return NaN;
  }
}

function openStream(port, onEvent) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/banners/stream?audience=all', agent: false, headers: { Accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET /banners/stream: HTTP ${res.statusCode}`));
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk) => {
        const at = performance.now();
        buf += chunk;
        let end;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) onEvent(event, JSON.parse(data), at);
        }
      });
      resolve({ close: () => res.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

async function rss(port) {
  const text = await new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c) => (body += c));
      res.on('end', () => resolve(body));
    })
      .on('error', reject)
      .end();
  });
  const m = /^notify_process_resident_memory_bytes (\d+)/m.exec(text);
  if (!m) throw new Error('no notify_process_resident_memory_bytes in /metrics');
  return Number(m[1]);
}

export async function benchBannerStream({ rounds = 5, streams = STREAMS } = {}) {
  const limit = fdLimit();
  if (limit < streams + 100) throw new Error(`ulimit -n is ${limit}; raise it to at least ${streams + 100} (ulimit -n 4096) for ${streams} streams`);
  const server = await startHttpServer('notify', serverEnv({ NOTIFY_DATA_DIR: tempDir(), NOTIFY_FEED_MAX_STREAMS: String(streams + 10) }));
  const open = [];
  let mcp;
  try {
    mcp = await connectHttp(server.url, 'modern');
    // Warm up: the hub, the feed and the tool path, then the baseline memory.
    const warm = await openStream(server.port, () => {});
    await mcp.client.callTool({ name: 'list_banners', arguments: {} });
    await sleep(300);
    warm.close();
    await sleep(300);
    const before = await rss(server.port);

    /** banner_id -> arrival times (ms, performance.now) of its `shown` event. */
    const arrivals = new Map();
    let snapshots = 0;
    const onEvent = (event, data, at) => {
      if (event === 'snapshot') snapshots++;
      else if (data.change === 'shown') {
        const id = data.banner.banner_id;
        if (!arrivals.has(id)) arrivals.set(id, []);
        arrivals.get(id).push(at);
      }
    };
    for (let i = 0; i < streams; i += 50) {
      open.push(...(await Promise.all(Array.from({ length: Math.min(50, streams - i) }, () => openStream(server.port, onEvent)))));
    }
    for (let waited = 0; snapshots < streams; waited += 50) {
      if (waited > 30_000) throw new Error(`only ${snapshots} of ${streams} snapshots within 30 s`);
      await sleep(50);
    }
    await sleep(500);
    const during = await rss(server.port);

    const p50s = [];
    const p99s = [];
    const maxes = [];
    /** The show_banner round trip alone, for scale. */
    const calls = [];
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      const shown = await mcp.client.callTool({ name: 'show_banner', arguments: { text: `Bench round ${r}`, audience: 'all' } });
      calls.push(performance.now() - t0);
      const id = shown.structuredContent?.banner_id;
      if (!id) throw new Error(`show_banner failed: ${JSON.stringify(shown)}`);
      // Events may arrive before the call's answer does: they are collected by id as they come.
      if (!arrivals.has(id)) arrivals.set(id, []);
      for (let waited = 0; arrivals.get(id).length < streams; waited += 10) {
        if (waited > 10_000) throw new Error(`round ${r}: ${arrivals.get(id).length} of ${streams} streams got the banner within 10 s`);
        await sleep(10);
      }
      const lat = arrivals.get(id).map((at) => at - t0);
      p50s.push(quantile(lat, 0.5));
      p99s.push(quantile(lat, 0.99));
      maxes.push(Math.max(...lat));
      await mcp.client.callTool({ name: 'dismiss_banner', arguments: { banner_id: id } });
      await sleep(400);
    }
    const perStream = (during - before) / streams;
    const note = `${streams.toLocaleString('en-US')} streams read by the bench process, ${rounds} rounds, from just before the call to each stream's event`;
    return [
      {
        section: '7. Live feed',
        name: `show_banner reaching ${streams.toLocaleString('en-US')} open streams: p50 delivery`,
        unit: 'ms',
        better: 'lower',
        value: summarize(p50s),
        note: `${note}; the show_banner call itself took ${Math.round(quantile(calls, 0.5))} ms (median)`,
      },
      { section: '7. Live feed', name: `show_banner reaching ${streams.toLocaleString('en-US')} open streams: p99 delivery`, unit: 'ms', better: 'lower', value: summarize(p99s), note: `slowest stream per round: ${Math.round(Math.max(...maxes))} ms at most` },
      {
        section: '7. Live feed',
        name: `server memory per open stream (RSS delta over ${streams.toLocaleString('en-US')} streams)`,
        unit: 'bytes',
        better: 'lower',
        value: exact(perStream),
        note: `RSS ${(before / 2 ** 20).toFixed(1)} MiB before, ${(during / 2 ** 20).toFixed(1)} MiB with the streams open; ulimit -n ${limit}`,
      },
    ];
  } finally {
    for (const s of open) s.close();
    await mcp?.close().catch(() => {});
    await server.stop();
  }
}
