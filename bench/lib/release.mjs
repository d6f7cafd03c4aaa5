/**
 * Releasing a round of outbox entries due at once (rows 9 and 12): the round moved to its due
 * time in one statement, `notify-mcp worker` processes of dist/cli.js started on the store,
 * and the wait until nothing is left to release.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { CLI } from './servers.mjs';
import { sleep } from './stats.mjs';

/**
 * Moves the entries whose `column` is LIKE `pattern` to `due` in one statement, straight in
 * the store's own tables: putting a round in takes longer on a loaded machine than any lead
 * time chosen beforehand.
 */
export async function makeDue(env, column, pattern, due) {
  const sql = (at, like) => `UPDATE outbox SET due_at = ${at}, send_at = ${at} WHERE ${column} LIKE ${like}`;
  if (env.DATABASE_URL) {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(sql('$1', '$2'), [due, pattern]);
    } finally {
      await client.end();
    }
    return;
  }
  const db = new Database(join(env.NOTIFY_DATA_DIR, 'notify.db'));
  try {
    db.prepare(sql('@due', '@pattern')).run({ due, pattern });
  } finally {
    db.close();
  }
}

/** `workers` worker processes on env's store, polling each second so a missed wake-up costs at most that. */
export function startWorkers(env, workers, nodeArgs = []) {
  return Array.from({ length: workers }, () =>
    spawn(process.execPath, [...nodeArgs, CLI, 'worker'], {
      env: { ...env, NOTIFY_SCHEDULE_POLL_S: '1', NOTIFY_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
}

export async function stopWorkers(children) {
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode !== null ? undefined : new Promise((r) => c.once('exit', r)))));
}

/** Resolves once nothing is scheduled, held or releasing; throws 2 minutes after `due`. */
export async function untilReleased(store, due) {
  const deadline = due + 120_000;
  while ((await store.listOutbox(['scheduled', 'held', 'releasing'], 1)).length > 0) {
    if (Date.now() > deadline) throw new Error('the workers did not release everything within 2 minutes of due');
    await sleep(200);
  }
}

/** `fn(i)` for i below `n`, `size` at a time. */
export async function inBatches(n, size, fn) {
  const out = [];
  for (let i = 0; i < n; i += size) out.push(...(await Promise.all(Array.from({ length: Math.min(size, n - i) }, (_, j) => fn(i + j)))));
  return out;
}
