/**
 * Row 10: what one console view costs the server while 100 emails with 2 MiB of attachments
 * each are held for approval (issue 35, d1): the worst /healthz latency during a view of
 * /console/approvals and of /console (the event loop's stall), and the server's peak RSS after
 * the views. Baseline, in the same run and interleaved: the same server and views with 100
 * held emails of a few hundred bytes. The held rows are written straight into each server's
 * SQLite file, with a payload the email channel built, before the server starts.
 *
 *   node bench/console-pages.mjs [--runs 5] [--n 100]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { email } from '../dist/channels/email/index.js';
import { silentLogger } from '../dist/core/log.js';
import { openSqliteStore } from '../dist/store/sqlite/store.js';
import { benchArgs } from './lib/args.mjs';
import { serverEnv, startHttpServer, tempDir } from './lib/servers.mjs';
import { ratio, sleep, summarize } from './lib/stats.mjs';

const OPS = 'ops-token-0123456789abcdef';

/** A data dir holding `n` held emails, each with `attachmentBytes` of attachments (two files). */
async function seed(n, attachmentBytes) {
  const dir = tempDir();
  const store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
  const half = Buffer.alloc(attachmentBytes / 2, 'a').toString('base64');
  const call = { via: 'email', to: 'a@example.com', subject: 'Quarterly figures', body_html: '<p>Attached.</p>', attachments: [{ filename: 'a.txt', content_base64: half }, { filename: 'b.txt', content_base64: half }] };
  const settings = email.settings({});
  const t0 = Date.UTC(2026, 11, 6);
  const { payload } = await email.buildPayload(call, { id: 'ntf_seed', settings, timeoutMs: 30_000, at: t0 });
  try {
    for (let i = 0; i < n; i++) {
      const id = `ntf_${String(i).padStart(32, '0')}`;
      await store.writeRecord({
        id, via: 'email', status: 'pending_approval', provider: 'smtp', provider_message_id: null, payload, error_code: null, attempts: 0, attempt_log: [], latency_ms: 0,
        client: 'bot', idempotency_key: null, created_at: Date.now() - n + i, provider_status: null, provider_status_code: null, status_updated_at: Date.now(),
        approval: { outcome: 'pending', reasons: ['email'], payload_sha256: 'ab'.repeat(32), expires_at: Date.now() + 86_400_000, recipients: ['a@example.com'], call },
      });
    }
  } finally {
    await store.close();
  }
  return dir;
}

async function get(port, path) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { Authorization: `Bearer ${OPS}` } });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${body.slice(0, 200)}`);
  return body;
}

/** The worst /healthz latency while `path` is viewed once, pinging every 10 ms. */
async function viewStall(port, path) {
  let worst = 0;
  let done = false;
  const pinger = (async () => {
    while (!done) {
      const s = performance.now();
      await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.arrayBuffer());
      worst = Math.max(worst, performance.now() - s);
      await sleep(10);
    }
  })();
  await sleep(30);
  await get(port, path);
  done = true;
  await pinger;
  return worst;
}

const peakRssMb = (pid) => Number(/^VmHWM:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

export async function benchConsolePages({ runs = 5, n = 100 } = {}) {
  const env = (dir) => serverEnv({ NOTIFY_DATA_DIR: dir, HOME: dir, NOTIFY_HTTP_TOKENS: `ops:${OPS}`, NOTIFY_OPERATOR_CLIENTS: 'ops', NOTIFY_APPROVAL: 'email', NOTIFY_APPROVAL_MODE: 'console' });
  const servers = {};
  for (const [kind, bytes] of [['big', 2 * 1024 * 1024], ['small', 200]]) servers[kind] = await startHttpServer('notify', env(await seed(n, bytes)));
  const m = { big: { approvals: [], list: [], rss: [] }, small: { approvals: [], list: [], rss: [] } };
  try {
    for (let r = 0; r < runs; r++) {
      for (const kind of r % 2 === 0 ? ['big', 'small'] : ['small', 'big']) {
        const s = servers[kind];
        m[kind].approvals.push(await viewStall(s.port, '/console/approvals'));
        m[kind].list.push(await viewStall(s.port, '/console'));
        m[kind].rss.push(peakRssMb(s.pid));
      }
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
  const row = (name, key, unit) => {
    const a = summarize(m.big[key]);
    const b = summarize(m.small[key]);
    return {
      section: '10. Console',
      name: `${name}, ${n} held emails with 2 MiB of attachments each`,
      unit,
      better: 'lower',
      value: a,
      baselineName: `the same, ${n} held emails of a few hundred bytes`,
      baseline: b,
      ratio: ratio(a, b, m.big[key], m.small[key]),
      note: `${runs} rounds, interleaved; the server in its own process, SQLite; /healthz pinged every 10 ms from the bench process during one view`,
    };
  };
  return [
    row('worst /healthz latency while /console/approvals is viewed (20 cards a page)', 'approvals', 'ms'),
    row('worst /healthz latency while /console is viewed (100 rows a page)', 'list', 'ms'),
    row('server peak RSS (VmHWM) after the views', 'rss', 'MB'),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = benchArgs();
  const rows = await benchConsolePages({ runs: Number(args.opt('runs', 5)), n: Number(args.opt('n', 100)) });
  const { markdownTable } = await import('./lib/table.mjs');
  process.stdout.write(`${markdownTable(rows)}\n`);
  const { removeTempDirs } = await import('./lib/servers.mjs');
  removeTempDirs();
}
