/**
 * Row 6: Streamable HTTP under load, 50 concurrent clients, each with one call in flight
 * (SDK Client, one per simulated host), dry-run SMS sends for a fixed time per run.
 *  - 6a, per protocol era: notify-mcp against the bare server over the same transport
 *    (throughput ≥ 0.5× bare), with latency p50/p99 across all calls of a run.
 *  - 6b: sends with a fresh idempotency_key each against the same sends without one, on the
 *    same notify-mcp server (≥ 0.7×), on SQLite and on PostgreSQL (a fresh schema, dropped
 *    afterwards; skipped with a note when PostgreSQL does not answer).
 * Runs alternate (and which goes first), so drift on a shared machine lands on both.
 *
 *   node bench/http-load.mjs [--era legacy|modern|both] [--only bare|keyed] [--store sqlite|pg|both]
 *                            [--runs 4] [--ms 2000] [--clients 50]
 *   node bench/http-load.mjs --ab A_DIST B_DIST [same options]   (keyed / unkeyed of two builds, interleaved)
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { ERA_LABEL, SMS } from './calls.mjs';
import { ERAS, connectHttp, removeTempDirs, serverEnv, startHttpServer, tempDir } from './lib/servers.mjs';
import { quantile, ratio, summarize } from './lib/stats.mjs';
import { freshPgSchema, pgAvailable, PG_URL } from './store.mjs';
import { benchArgs } from './lib/args.mjs';

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
  return { cps: (lat.length * 1000) / (performance.now() - t0), p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), calls: lat.length };
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

export async function benchHttpKeyed({ era = 'modern', clients = 50, runs = 4, ms = 2_000, stores = ['sqlite', 'pg'] } = {}) {
  const out = stores.includes('sqlite') ? await keyedVsPlain('SQLite', {}, { era, clients, runs, ms }) : [];
  if (!stores.includes('pg')) return out;
  if (!(await pgAvailable())) {
    out.push({ section: '6. HTTP under load', name: `http, ${ERA_LABEL[era]}, ${clients} concurrent clients, PostgreSQL: keyed sends`, skipped: `skipped: PostgreSQL at ${PG_URL} did not answer` });
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

/** ms on CPU of a process so far (/proc/PID/schedstat); 0 once it is gone. */
function cpuMs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return 0;
  }
}

/**
 * Two builds, same store kind, one server each (PostgreSQL: a schema each): per round, each
 * build's keyed and unkeyed runs, the order rotating so drift lands on both. Besides
 * throughput, CPU per call, which a loaded machine disturbs far less: the server process's,
 * and on PostgreSQL its backends' (found by application_name; they run on this machine).
 */
async function abKeyed(dists, storeName, { era, clients, runs, ms }) {
  const servers = [];
  const conns = [];
  const schemas = [];
  let admin;
  try {
    for (const [d, dist] of dists.entries()) {
      const env = { NOTIFY_DATA_DIR: tempDir(), NOTIFY_LOG_LEVEL: 'warn' };
      if (storeName === 'PostgreSQL') {
        const schema = await freshPgSchema();
        schemas.push(schema);
        const url = new URL(schema.url);
        url.searchParams.set('application_name', `notify-ab-${process.pid}-${d}`);
        env.DATABASE_URL = url.toString();
      }
      const server = await startHttpServer('notify', serverEnv(env), { cli: resolve(dist, 'cli.js') });
      servers.push(server);
      conns.push(await connectAll(server.url, era, clients));
    }
    if (storeName === 'PostgreSQL') {
      admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
    }
    const backendsMs = async (d) => {
      if (!admin) return 0;
      const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [`notify-ab-${process.pid}-${d}`]);
      return rows.reduce((sum, r) => sum + cpuMs(r.pid), 0);
    };
    const runId = `${process.pid}-${Date.now().toString(36)}`;
    let n = 0;
    const measured = (d, run) => async () => {
      const server0 = cpuMs(servers[d].pid);
      const db0 = await backendsMs(d);
      const res = await run();
      // Backends opened during the run are missed at its start: warm-up runs open the pool first.
      return { ...res, serverUs: ((cpuMs(servers[d].pid) - server0) * 1000) / res.calls, dbUs: (((await backendsMs(d)) - db0) * 1000) / res.calls };
    };
    const steps = dists.flatMap((_, d) => [
      { d, keyed: true, run: measured(d, () => load(conns[d], TOOL.notify, ms, (i) => ({ ...SMS, idempotency_key: `${runId}-${n}-${i}` }))) },
      { d, keyed: false, run: measured(d, () => load(conns[d], TOOL.notify, ms, () => SMS)) },
    ]);
    for (const s of steps) await s.run(); // warm-up
    const res = dists.map(() => ({ keyed: [], plain: [] }));
    for (let r = 0; r < runs; r++) {
      for (let i = 0; i < steps.length; i++) {
        const s = steps[(i + r) % steps.length];
        n++;
        res[s.d][s.keyed ? 'keyed' : 'plain'].push(await s.run());
      }
    }
    return res;
  } finally {
    await admin?.end().catch(() => {});
    for (const c of conns) await closeAll(c);
    for (const s of servers) await s.stop();
    for (const s of schemas) await s.drop();
  }
}

const isMain = process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isMain) {
  const { argv, opt } = benchArgs();
  const eraOpt = opt('era', 'both');
  const eras = eraOpt === 'both' ? ERAS : [eraOpt];
  const storeOpt = opt('store', 'both');
  const stores = storeOpt === 'both' ? ['sqlite', 'pg'] : [storeOpt];
  const o = { clients: Number(opt('clients', 50)), runs: Number(opt('runs', 4)), ms: Number(opt('ms', 2_000)) };
  const only = opt('only', undefined);
  const fmt = (x) => `${x.median.toFixed(2)}× (${x.lo?.toFixed(2)}–${x.hi?.toFixed(2)})`;
  try {
    const ab = argv.indexOf('--ab');
    if (ab >= 0) {
      const dists = [argv[ab + 1], argv[ab + 2]];
      for (const era of eras) {
        for (const store of stores) {
          const storeName = store === 'pg' ? 'PostgreSQL' : 'SQLite';
          const res = await abKeyed(dists, storeName, { era, ...o });
          dists.forEach((dist, d) => {
            const { keyed, plain } = res[d];
            const k = summarize(keyed.map((x) => x.cps));
            const p = summarize(plain.map((x) => x.cps));
            const r = ratio(k, p, keyed.map((x) => x.cps), plain.map((x) => x.cps));
            const med = (xs, f) => summarize(xs.map(f)).median;
            console.log(
              `${ERA_LABEL[era]} ${storeName} ${dist}: keyed ${k.median.toFixed(0)} calls/s (${k.lo.toFixed(0)}–${k.hi.toFixed(0)}), ` +
                `unkeyed ${p.median.toFixed(0)} (${p.lo.toFixed(0)}–${p.hi.toFixed(0)}), keyed/unkeyed ${fmt(r)}; ` +
                `p50 ${med(keyed, (x) => x.p50).toFixed(1)} / ${med(plain, (x) => x.p50).toFixed(1)} ms; ` +
                `CPU per call, server ${med(keyed, (x) => x.serverUs).toFixed(0)} / ${med(plain, (x) => x.serverUs).toFixed(0)} µs` +
                (storeName === 'PostgreSQL' ? `, PostgreSQL backends ${med(keyed, (x) => x.dbUs).toFixed(0)} / ${med(plain, (x) => x.dbUs).toFixed(0)} µs` : ''),
            );
          });
        }
      }
    } else {
      for (const era of eras) {
        const rows = [];
        if (only !== 'keyed') rows.push(...(await benchHttpVsBare({ era, ...o })));
        if (only !== 'bare') rows.push(...(await benchHttpKeyed({ era, ...o, stores })));
        for (const row of rows) {
          if (row.skipped) console.log(`${row.name}: ${row.skipped}`);
          else console.log(`${row.name}: ${row.value.median.toFixed(1)} ${row.unit} vs ${row.baseline.median.toFixed(1)}, ratio ${fmt(row.ratio)}`);
        }
      }
    }
  } finally {
    removeTempDirs();
  }
}
