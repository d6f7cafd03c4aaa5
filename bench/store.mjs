/**
 * Row 5a: idempotent dry-run sends per second through the tool layer in process (createApp
 * + the catalog's send_notification entry: validation, policy, idempotency claim, dry-run
 * payload, delivery record, result), each with a fresh idempotency_key, on SQLite and on
 * PostgreSQL. Slack, so the payload is small and the store is what is measured. Baseline:
 * the same send without a key (no claim, no completion), on the same store, interleaved.
 * PostgreSQL gets a fresh schema, dropped afterwards; skipped with a note when it does not
 * answer.
 *
 *   node bench/store.mjs [--runs 5] [--calls 100] [--concurrency 1] [--store sqlite|pg|both]
 *   node bench/store.mjs --ab A_DIST B_DIST [same options]   (two builds, interleaved)
 */
import { resolve } from 'node:path';
import pg from 'pg';
import { removeTempDirs, tempDir } from './lib/servers.mjs';
import { ratio, summarize } from './lib/stats.mjs';
import { benchArgs } from './lib/args.mjs';

export const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const SLACK = { via: 'slack', channel: 'C0123ABCD', text: 'Deploy finished' };
const DIST = resolve(import.meta.dirname, '../dist');

/** One build's createApp, loadConfig and a quiet logger. Every build shares node_modules' pg, whose queries are counted below. */
async function build(dist = DIST) {
  const [{ createApp }, { loadConfig }, { createLogger }] = await Promise.all(
    ['app.js', 'config/config.js', 'core/log.js'].map((f) => import(resolve(dist, f))),
  );
  return { createApp, loadConfig, quiet: createLogger('error', (line) => process.stderr.write(line)) };
}

/**
 * Statements sent to PostgreSQL (each a round trip: node-postgres waits for one's answer
 * before sending the next) by `fn`, counted on pg.Client, so a pooled query and a query on
 * a checked-out client (a transaction) both count.
 */
async function countStatements(fn) {
  const query = pg.Client.prototype.query;
  let n = 0;
  pg.Client.prototype.query = function (...args) {
    n++;
    return query.apply(this, args);
  };
  try {
    await fn();
  } finally {
    pg.Client.prototype.query = query;
  }
  return n;
}

export async function pgAvailable(url = PG_URL) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A fresh schema on the test database, with a DATABASE_URL whose search_path points at it. */
export async function freshPgSchema(url = PG_URL) {
  const schema = `notify_bench_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const withSchema = new URL(url);
  withSchema.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: withSchema.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    },
  };
}

/** `n` sends, `concurrency` in flight; sends per second. */
async function sends(app, entry, n, keyed, tag, quiet, concurrency = 1) {
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const args = keyed ? { ...SLACK, idempotency_key: `${tag}-${i}` } : SLACK;
      const result = await entry.call(args, { deps: app, store: app.store, config: app.config, log: quiet, client: 'bench', now: app.now });
      if (result.isError || result.structuredContent?.status !== 'dry_run' || result.structuredContent.replayed) {
        throw new Error(`unexpected send result: ${JSON.stringify(result).slice(0, 500)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return (n * 1000) / (performance.now() - t0);
}

/** An app on `env`'s store, as a server builds it; `overrides` as createApp takes them (noOutboxRunner: no release loop in the bench). */
export async function openApp(env, dist, overrides) {
  const b = await build(dist);
  const app = await b.createApp(b.loadConfig(env), b.quiet, overrides);
  return { app, entry: app.catalog.flat.entries.get('send_notification'), quiet: b.quiet };
}

async function benchOne(storeName, env, { runs, calls, concurrency = 1 }) {
  const { app, entry, quiet } = await openApp(env);
  try {
    const runId = Date.now().toString(36);
    await sends(app, entry, 50, true, `warm-${runId}`, quiet);
    await sends(app, entry, 50, false, undefined, quiet);
    // PostgreSQL: statements per send (each a round trip), counted, not timed.
    const trips = async (keyed) => (await countStatements(() => sends(app, entry, 10, keyed, `count-${runId}`, quiet))) / 10;
    const tripsNote = app.store.pool ? `; round trips per send: ${await trips(true)} keyed, ${await trips(false)} unkeyed` : '';
    const a = [];
    const b = [];
    for (let r = 0; r < runs; r++) {
      const keyed = () => sends(app, entry, calls, true, `${runId}-${r}`, quiet, concurrency).then((x) => a.push(x));
      const plain = () => sends(app, entry, calls, false, undefined, quiet, concurrency).then((x) => b.push(x));
      if (r % 2 === 0) await keyed().then(plain);
      else await plain().then(keyed);
    }
    const sa = summarize(a);
    const sb = summarize(b);
    return {
      section: '5. Store',
      name: `${storeName}: idempotent dry-run sends/s (fresh key each, ${concurrency} in flight)`,
      unit: 'sends/s',
      better: 'higher',
      value: sa,
      baselineName: 'same send without idempotency_key, same store',
      baseline: sb,
      ratio: ratio(sa, sb, a, b),
      note: `${runs} runs × ${calls} sends, in process (createApp + catalog), slack dry-run${tripsNote}`,
    };
  } finally {
    await app.close();
  }
}

export async function benchStoreSends({ runs = 5, calls = 200, concurrency = 1, stores = ['sqlite', 'pg'] } = {}) {
  const rows = stores.includes('sqlite') ? [await benchOne('SQLite', { NOTIFY_DATA_DIR: tempDir(), NOTIFY_LOG_LEVEL: 'error' }, { runs, calls, concurrency })] : [];
  if (!stores.includes('pg')) return rows;
  if (!(await pgAvailable())) {
    rows.push({
      section: '5. Store',
      name: 'PostgreSQL: idempotent dry-run sends/s',
      skipped: `skipped: PostgreSQL at ${PG_URL} did not answer`,
    });
    return rows;
  }
  const schema = await freshPgSchema();
  try {
    rows.push(await benchOne('PostgreSQL', { NOTIFY_DATA_DIR: tempDir(), NOTIFY_LOG_LEVEL: 'error', DATABASE_URL: schema.url }, { runs, calls, concurrency }));
  } finally {
    await schema.drop();
  }
  return rows;
}

/** Two builds, each its own app (PostgreSQL: a schema each), runs rotating among the four series. */
async function abStore(dists, storeName, { runs, calls, concurrency }) {
  const apps = [];
  const schemas = [];
  try {
    for (const dist of dists) {
      const env = { NOTIFY_DATA_DIR: tempDir(), NOTIFY_LOG_LEVEL: 'error' };
      if (storeName === 'PostgreSQL') {
        const schema = await freshPgSchema();
        schemas.push(schema);
        env.DATABASE_URL = schema.url;
      }
      apps.push(await openApp(env, dist));
    }
    const runId = Date.now().toString(36);
    let n = 0;
    const steps = apps.flatMap((x, d) => [
      { d, keyed: true, run: (k) => sends(x.app, x.entry, k, true, `${runId}-${n}`, x.quiet, concurrency) },
      { d, keyed: false, run: (k) => sends(x.app, x.entry, k, false, undefined, x.quiet, concurrency) },
    ]);
    for (const s of steps) await s.run(50);
    const trips = [];
    for (const s of steps) {
      n++;
      trips.push((await countStatements(() => s.run(10))) / 10);
    }
    const res = apps.map(() => ({ keyed: [], plain: [] }));
    for (let r = 0; r < runs; r++) {
      for (let i = 0; i < steps.length; i++) {
        const s = steps[(i + r) % steps.length];
        n++;
        res[s.d][s.keyed ? 'keyed' : 'plain'].push(await s.run(calls));
      }
    }
    return dists.map((dist, d) => {
      const k = summarize(res[d].keyed);
      const p = summarize(res[d].plain);
      const r = ratio(k, p, res[d].keyed, res[d].plain);
      const rt = storeName === 'PostgreSQL' ? `, round trips per send ${trips[2 * d]} keyed / ${trips[2 * d + 1]} unkeyed` : '';
      return `${storeName} ${dist}: keyed ${k.median.toFixed(0)} sends/s (${k.lo.toFixed(0)}–${k.hi.toFixed(0)}), unkeyed ${p.median.toFixed(0)} (${p.lo.toFixed(0)}–${p.hi.toFixed(0)}), keyed/unkeyed ${r.median.toFixed(2)}× (${r.lo.toFixed(2)}–${r.hi.toFixed(2)})${rt}`;
    });
  } finally {
    for (const x of apps) await x.app.close();
    for (const s of schemas) await s.drop();
  }
}

const isMain = process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isMain) {
  const { argv, opt } = benchArgs();
  const storeOpt = opt('store', 'both');
  const stores = storeOpt === 'both' ? ['sqlite', 'pg'] : [storeOpt];
  const o = { runs: Number(opt('runs', 5)), calls: Number(opt('calls', 100)), concurrency: Number(opt('concurrency', 1)) };
  try {
    const ab = argv.indexOf('--ab');
    if (ab >= 0) {
      for (const store of stores) {
        for (const line of await abStore([argv[ab + 1], argv[ab + 2]], store === 'pg' ? 'PostgreSQL' : 'SQLite', o)) console.log(line);
      }
    } else {
      for (const row of await benchStoreSends({ ...o, stores })) {
        console.log(row.skipped ? `${row.name}: ${row.skipped}` : `${row.name}: ${row.value.median.toFixed(0)} vs ${row.baseline.median.toFixed(0)}, ${row.ratio.median.toFixed(2)}× (${row.ratio.lo?.toFixed(2)}–${row.ratio.hi?.toFixed(2)})${row.note ? ` [${row.note}]` : ''}`);
      }
    }
  } finally {
    removeTempDirs();
  }
}
