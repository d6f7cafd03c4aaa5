/**
 * Row 5b: GET /banners with 10,000 active banners against a plain node:http server
 * answering the same JSON bytes (bench/plain-server.mjs), both child processes, loaded
 * from this process by a keep-alive loop (lib/load.mjs), runs interleaved.
 * The banners are inserted through the store before notify-mcp starts; the seeding
 * connection turns fsync off (synchronous is per connection; the server opens its own,
 * with the store's own settings).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger } from '../dist/core/log.js';
import { openSqliteStore, sqliteFile } from '../dist/store/sqlite/store.js';
import { fetchBody, load } from './lib/load.mjs';
import { freePort, ROOT, serverEnv, startHttpServer, tempDir, waitForHttp } from './lib/servers.mjs';
import { ratio, summarize } from './lib/stats.mjs';

export const BANNERS = 10_000;
const PATH = '/banners?audience=all,admins';
const SEVERITIES = ['info', 'warning', 'critical'];

function audienceOf(i) {
  if (i % 5 < 2) return 'all';
  if (i % 5 === 2) return 'admins';
  return `team:t${i % 20}`;
}

async function seed(dataDir, now) {
  const store = await openSqliteStore({ file: sqliteFile(dataDir), log: createLogger('error', () => {}) });
  store.db.pragma('synchronous = OFF');
  try {
    for (let i = 0; i < BANNERS; i++) {
      await store.insertBanner({
        id: `bnr_${randomUUID()}`,
        text: `Banner ${i}: scheduled maintenance on cluster ${i % 7} tonight.`,
        audience: audienceOf(i),
        severity: SEVERITIES[i % 3],
        dedupe_key: null,
        created_at: now - (BANNERS - i) * 1000,
        expires_at: now + 7 * 86_400_000,
        dismissed_at: null,
      });
    }
    const active = await store.listBanners({ status: 'active', now: Date.now() });
    if (active.length !== BANNERS) throw new Error(`seeded ${active.length} active banners, wanted ${BANNERS}`);
  } finally {
    await store.close();
  }
}

async function startPlain(bodyFile) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'bench/plain-server.mjs'), String(port), bodyFile], { stdio: 'ignore' });
  await waitForHttp(port);
  return {
    port,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', r);
        child.kill('SIGTERM');
      }),
  };
}

export async function benchBannerFeed({ runs = 3, ms = 2_000, concurrency = 8 } = {}) {
  const dataDir = tempDir();
  await seed(dataDir, Date.now());
  const notify = await startHttpServer('notify', serverEnv({ NOTIFY_DATA_DIR: dataDir }));
  let plain;
  try {
    const first = await fetchBody(notify.port, PATH);
    if (first.status !== 200) throw new Error(`GET ${PATH}: HTTP ${first.status} ${first.body.toString().slice(0, 300)}`);
    const feed = JSON.parse(first.body.toString());
    const items = Array.isArray(feed) ? feed : (feed.banners ?? []);
    if (items.length === 0) throw new Error(`GET ${PATH} returned no banners: ${first.body.toString().slice(0, 300)}`);
    const bodyFile = join(dataDir, 'feed.json');
    writeFileSync(bodyFile, first.body);
    plain = await startPlain(bodyFile);

    const servers = { notify: notify.port, plain: plain.port };
    for (const port of Object.values(servers)) await load(port, PATH, { concurrency, ms: 300 });
    const res = { notify: [], plain: [] };
    for (let r = 0; r < runs; r++) {
      const order = r % 2 === 0 ? ['notify', 'plain'] : ['plain', 'notify'];
      for (const kind of order) res[kind].push(await load(servers[kind], PATH, { concurrency, ms }));
    }
    const a = summarize(res.notify);
    const b = summarize(res.plain);
    return [
      {
        section: '5. Store',
        name: `GET ${PATH}, ${BANNERS.toLocaleString('en-US')} active banners (SQLite; ${items.length} in the answer, ${first.body.length} bytes)`,
        unit: 'req/s',
        better: 'higher',
        value: a,
        baselineName: 'plain node:http server, same JSON bytes preloaded',
        baseline: b,
        ratio: ratio(a, b, res.notify, res.plain),
        target: { min: 0.5, text: '≥ 0.5× plain server' },
        note: `${runs} runs × ${ms / 1000} s, ${concurrency} keep-alive connections`,
      },
    ];
  } finally {
    await notify.stop();
    await plain?.stop();
  }
}
