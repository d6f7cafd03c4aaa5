/**
 * Row 6: Streamable HTTP under load, 50 concurrent clients, each with one call in flight
 * (SDK Client, one per simulated host), dry-run SMS sends for a fixed time per run.
 *  - 6a, per protocol era: notify-mcp against the bare server over the same transport
 *    (throughput ≥ 0.5× bare), with latency p50/p99 across all calls of a run.
 *  - 6b: sends with a fresh idempotency_key each against the same sends without one, on the
 *    same notify-mcp server (≥ 0.7×), on SQLite and on PostgreSQL (a fresh schema, dropped
 *    afterwards; skipped with a note when PostgreSQL does not answer).
 * Runs alternate (and which goes first), so drift on a shared machine lands on both.
 */
import { ERA_LABEL, SMS } from './calls.mjs';
import { connectHttp, serverEnv, startHttpServer, tempDir } from './lib/servers.mjs';
import { quantile, ratio, summarize } from './lib/stats.mjs';
import { freshPgSchema, pgAvailable, PG_URL } from './store.mjs';

const TOOL = { notify: 'send_notification', bare: 'send' };

/** `clients` loops, each calling until `ms` have passed; throughput and latency quantiles. */
async function load(conns, tool, ms, argsFor) {
  const lat = [];
  const stop = performance.now() + ms;
  const t0 = performance.now();
  let seq = 0;
  await Promise.all(
    conns.map(async (c) => {
      while (performance.now() < stop) {
        const s = performance.now();
        const result = await c.client.callTool({ name: tool, arguments: argsFor(seq++) });
        lat.push(performance.now() - s);
        if (result.isError || result.structuredContent?.status !== 'dry_run' || result.structuredContent.replayed) {
          throw new Error(`${tool}: unexpected result ${JSON.stringify(result).slice(0, 300)}`);
        }
      }
    }),
  );
  return { cps: (lat.length * 1000) / (performance.now() - t0), p50: quantile(lat, 0.5), p99: quantile(lat, 0.99) };
}

async function connectAll(url, era, n) {
  const conns = [];
  for (let i = 0; i < n; i++) conns.push(await connectHttp(url, era));
  return conns;
}

function rows(name, baselineName, res, target, note) {
  const out = [];
  for (const [metric, unit, better] of [['cps', 'calls/s', 'higher'], ['p50', 'ms', 'lower'], ['p99', 'ms', 'lower']]) {
    const a = res.a.map((x) => x[metric]);
    const b = res.b.map((x) => x[metric]);
    const sa = summarize(a);
    const sb = summarize(b);
    out.push({
      section: '6. HTTP under load',
      name: `${name} ${metric === 'cps' ? 'calls/s' : metric}`,
      unit,
      better,
      value: sa,
      baselineName,
      baseline: sb,
      ratio: ratio(sa, sb, a, b),
      target: metric === 'cps' ? target : undefined,
      note,
    });
  }
  return out;
}

/** Interleaved runs of `a` and `b`, after one warm-up run of each. */
async function alternate(runs, a, b) {
  await a();
  await b();
  const res = { a: [], b: [] };
  for (let r = 0; r < runs; r++) {
    if (r % 2 === 0) {
      res.a.push(await a());
      res.b.push(await b());
    } else {
      res.b.push(await b());
      res.a.push(await a());
    }
  }
  return res;
}

async function closeAll(conns) {
  await Promise.all(conns.map((c) => c.close().catch(() => {})));
}

export async function benchHttpVsBare({ era = 'modern', clients = 50, runs = 4, ms = 2_000 } = {}) {
  const notify = await startHttpServer('notify', serverEnv({ NOTIFY_DATA_DIR: tempDir(), NOTIFY_LOG_LEVEL: 'warn' }));
  const bare = await startHttpServer('bare', serverEnv());
  const conns = {};
  try {
    conns.notify = await connectAll(notify.url, era, clients);
    conns.bare = await connectAll(bare.url, era, clients);
    const res = await alternate(
      runs,
      () => load(conns.notify, TOOL.notify, ms, () => SMS),
      () => load(conns.bare, TOOL.bare, ms, () => SMS),
    );
    return rows(
      `http, ${ERA_LABEL[era]}, ${clients} concurrent clients: send_notification (sms, dry-run)`,
      'bare v2 SDK server over the same transport',
      res,
      { min: 0.5, text: 'throughput ≥ 0.5× bare' },
      `${runs} runs × ${ms / 1000} s each, ${clients} SDK clients, 1 call in flight each`,
    );
  } finally {
    for (const c of Object.values(conns)) await closeAll(c);
    await notify.stop();
    await bare.stop();
  }
}

async function keyedVsPlain(storeName, env, { era, clients, runs, ms }) {
  const server = await startHttpServer('notify', serverEnv({ NOTIFY_DATA_DIR: tempDir(), NOTIFY_LOG_LEVEL: 'warn', ...env }));
  let conns = [];
  try {
    conns = await connectAll(server.url, era, clients);
    const runId = `${process.pid}-${Date.now().toString(36)}`;
    let run = 0;
    const res = await alternate(
      runs,
      () => {
        const tag = `${runId}-${run++}`;
        return load(conns, TOOL.notify, ms, (i) => ({ ...SMS, idempotency_key: `${tag}-${i}` }));
      },
      () => load(conns, TOOL.notify, ms, () => SMS),
    );
    return rows(
      `http, ${ERA_LABEL[era]}, ${clients} concurrent clients, ${storeName}: sends with a fresh idempotency_key`,
      'same sends without idempotency_key, same server',
      res,
      { min: 0.7, text: 'throughput ≥ 0.7× unkeyed' },
      `${runs} runs × ${ms / 1000} s each, sms dry-run`,
    );
  } finally {
    await closeAll(conns);
    await server.stop();
  }
}

export async function benchHttpKeyed({ era = 'modern', clients = 50, runs = 4, ms = 2_000 } = {}) {
  const out = await keyedVsPlain('SQLite', {}, { era, clients, runs, ms });
  if (!(await pgAvailable())) {
    out.push({ section: '6. HTTP under load', name: `http, ${clients} concurrent clients, PostgreSQL: keyed sends`, skipped: `skipped: PostgreSQL at ${PG_URL} did not answer` });
    return out;
  }
  const schema = await freshPgSchema();
  try {
    out.push(...(await keyedVsPlain('PostgreSQL', { DATABASE_URL: schema.url }, { era, clients, runs, ms })));
  } finally {
    await schema.drop();
  }
  return out;
}
