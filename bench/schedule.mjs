/**
 * Row 9: scheduled sends, due → sent. 10,000 Slack dry-run sends are put in the outbox, all
 * due in the same second, and released by `notify-mcp worker` processes (dist/cli.js) over
 * the same store; each send's lateness is its record's time minus its due time. SQLite: one
 * worker (the target), against two on the same file (baseline). PostgreSQL: two replicas
 * (the target), against one (baseline). Target: p99 within 2 s of due. PostgreSQL gets a
 * fresh schema, dropped afterwards; skipped with a note when it does not answer.
 *
 *   node bench/schedule.mjs [--n 10000]
 */
import { resolve } from 'node:path';
import { inBatches, makeDue, startWorkers, stopWorkers, untilReleased } from './lib/release.mjs';
import { removeTempDirs, tempDir } from './lib/servers.mjs';
import { quantile } from './lib/stats.mjs';
import { PG_URL, freshPgSchema, pgAvailable } from './store.mjs';

const DIST = resolve(import.meta.dirname, '../dist');
const CALL = { via: 'slack', channel: 'C0123ABCD', text: 'Nightly report is ready' };

async function openStoreOf(env) {
  const [{ openStore }, { loadConfig }, { silentLogger }] = await Promise.all(['store/index.js', 'config/config.js', 'core/log.js'].map((f) => import(resolve(DIST, f))));
  return openStore(loadConfig(env), silentLogger);
}

/** One round: `workers` processes release `n` sends due at once; the lateness of each, in ms. */
export async function round(env, workers, n, nodeArgs = []) {
  const store = await openStoreOf(env);
  let children = [];
  try {
    const tag = Math.random().toString(36).slice(2, 8);
    // Put in an hour ahead, then made due all at once by one statement.
    const later = Date.now() + 3_600_000;
    await inBatches(n, 100, (i) =>
      store.scheduleSend({
        id: `ntf_bench_${tag}_${String(i).padStart(6, '0')}`,
        via: 'slack',
        client: 'bench',
        call: CALL,
        state: 'scheduled',
        send_at: later,
        due_at: later,
        created_at: Date.now(),
        owner: null,
        claimed_at: null,
        finished_at: null,
        outcome: null,
        idem_key: null,
        payload_hash: null,
      }),
    );
    // Due once the workers have started and armed their timers (their slow poll reads the next due time).
    const due = Date.now() + 4_000;
    await makeDue(env, 'id', `ntf_bench_${tag}_%`, due);
    children = startWorkers(env, workers, nodeArgs);
    await untilReleased(store, due);
    const records = (await store.listDeliveries(n * 2)).filter((r) => r.id.startsWith(`ntf_bench_${tag}_`));
    if (records.length !== n) throw new Error(`${records.length} of ${n} were recorded`);
    return { late: records.map((r) => r.status_updated_at - due) };
  } finally {
    await stopWorkers(children);
    await store.close();
  }
}

function row(storeName, target, base, n, targetWorkers, baseWorkers) {
  const v = quantile(target.late, 0.99);
  const b = quantile(base.late, 0.99);
  return {
    section: '9. Scheduled sends',
    name: `${storeName}: due → sent for ${n.toLocaleString('en-US')} due at once, p99 (${targetWorkers} worker${targetWorkers > 1 ? 's' : ''})`,
    unit: 'ms',
    better: 'lower',
    value: { median: v, lo: quantile(target.late, 0.5), hi: Math.max(...target.late) },
    baselineName: `the same with ${baseWorkers} worker${baseWorkers > 1 ? 's' : ''}`,
    baseline: { median: b, lo: quantile(base.late, 0.5), hi: Math.max(...base.late) },
    ratio: { median: v / b },
    target: { text: 'p99 ≤ 2,000 ms', absolute: true, max: 2_000 },
    note: `figures: p99 (p50–max) of each send's lateness; slack dry-run; worker processes of dist/cli.js`,
  };
}

export async function benchSchedule({ n = 10_000 } = {}) {
  const rows = [];
  {
    const dir = tempDir();
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NOTIFY_DATA_DIR: dir };
    const one = await round(env, 1, n);
    const two = await round(env, 2, n);
    rows.push(row('SQLite', one, two, n, 1, 2));
  }
  if (!(await pgAvailable())) {
    rows.push({ section: '9. Scheduled sends', name: 'PostgreSQL: due → sent', skipped: `skipped: PostgreSQL at ${PG_URL} did not answer` });
    return rows;
  }
  const schema = await freshPgSchema();
  try {
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NOTIFY_DATA_DIR: tempDir(), DATABASE_URL: schema.url };
    const two = await round(env, 2, n);
    const one = await round(env, 1, n);
    rows.push(row('PostgreSQL', two, one, n, 2, 1));
  } finally {
    await schema.drop();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--n');
  const n = at > 0 ? Number(process.argv[at + 1]) : 10_000;
  try {
    const rows = await benchSchedule({ n });
    const { markdownTable } = await import('./lib/table.mjs');
    process.stdout.write(markdownTable(rows) + '\n');
  } finally {
    removeTempDirs();
  }
}
