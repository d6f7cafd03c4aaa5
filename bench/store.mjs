/**
 * Row 5a: idempotent dry-run sends per second through the tool layer in process (createApp
 * + the catalog's send_notification entry: validation, policy, idempotency claim, dry-run
 * payload, delivery record, result), each with a fresh idempotency_key, on SQLite and on
 * PostgreSQL. Slack, so the payload is small and the store is what is measured. Baseline:
 * the same send without a key (no claim, no completion), on the same store, interleaved.
 * PostgreSQL gets a fresh schema, dropped afterwards; skipped with a note when it does not
 * answer.
 */
import pg from 'pg';
import { createApp } from '../dist/app.js';
import { loadConfig } from '../dist/config.js';
import { createLogger } from '../dist/log.js';
import { tempDir } from './lib/servers.mjs';
import { ratio, summarize } from './lib/stats.mjs';

export const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const SLACK = { via: 'slack', channel: 'C0123ABCD', text: 'Deploy finished' };
const quiet = createLogger('error', (line) => process.stderr.write(line));

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

async function sends(app, entry, n, keyed, tag) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const args = keyed ? { ...SLACK, idempotency_key: `${tag}-${i}` } : SLACK;
    const result = await entry.call(args, { deps: app, store: app.store, config: app.config, log: quiet, client: 'bench', now: app.now });
    if (result.isError || result.structuredContent?.status !== 'dry_run' || result.structuredContent.replayed) {
      throw new Error(`unexpected send result: ${JSON.stringify(result).slice(0, 500)}`);
    }
  }
  return (n * 1000) / (performance.now() - t0);
}

async function benchOne(storeName, env, { runs, calls }) {
  const app = await createApp(loadConfig(env), quiet);
  try {
    const entry = app.catalog.flat.entries.get('send_notification');
    const runId = Date.now().toString(36);
    await sends(app, entry, 50, true, `warm-${runId}`);
    await sends(app, entry, 50, false);
    // PostgreSQL: statements per send (each a round trip), counted, not timed.
    let queries = 0;
    const pool = app.store.pool;
    const trips = async (keyed) => {
      queries = 0;
      await sends(app, entry, 10, keyed, `count-${runId}`);
      return queries / 10;
    };
    let tripsNote = '';
    if (pool) {
      const query = pool.query.bind(pool);
      pool.query = (...args) => (queries++, query(...args));
      tripsNote = `; round trips per send: ${await trips(true)} keyed, ${await trips(false)} unkeyed`;
      pool.query = query;
    }
    const a = [];
    const b = [];
    for (let r = 0; r < runs; r++) {
      const keyed = () => sends(app, entry, calls, true, `${runId}-${r}`).then((x) => a.push(x));
      const plain = () => sends(app, entry, calls, false).then((x) => b.push(x));
      if (r % 2 === 0) await keyed().then(plain);
      else await plain().then(keyed);
    }
    const sa = summarize(a);
    const sb = summarize(b);
    return {
      section: '5. Store',
      name: `${storeName}: idempotent dry-run sends/s (fresh key each, 1 in flight)`,
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

export async function benchStoreSends({ runs = 5, calls = 200 } = {}) {
  const rows = [await benchOne('SQLite', { NOTIFY_DATA_DIR: tempDir(), NOTIFY_LOG_LEVEL: 'error' }, { runs, calls })];
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
    rows.push(await benchOne('PostgreSQL', { NOTIFY_DATA_DIR: tempDir(), NOTIFY_LOG_LEVEL: 'error', DATABASE_URL: schema.url }, { runs, calls }));
  } finally {
    await schema.drop();
  }
  return rows;
}
