/**
 * A wait for an answer (get_notification's wait_s) on one store ends when another store on
 * the same data (another process or replica) takes the answer: SQLite (one file, two
 * handles) and PostgreSQL (one schema, two pools). Prints the answer-to-return latency.
 */
import { mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { answerWaits } from '../../src/notification/answer-waits.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { PG_URL, postgresSkipReason } from '../helpers/postgres.js';

const unavailable = await postgresSkipReason('answer-waits');
const ROUNDS = 20;

async function measure(waiting: Store, answering: Store): Promise<number[]> {
  const waits = answerWaits(waiting);
  const latencies: number[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const id = `ntf_wait_${i}`;
      await waiting.recordQuestion(
        { notification_id: id, prompt: 'p', choices: ['Yes'], expires_in_s: 60, created_at: 0, client: null },
        [],
      );
      const ended = waits.wait(id, 5_000);
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
      const t = performance.now();
      await answering.answerQuestion(id, { choice: 'Yes', by: 'link', via: 'email', at: Date.now() });
      expect(await ended).toBe('answered');
      latencies.push(performance.now() - t);
    }
  } finally {
    waits.close();
  }
  return latencies.sort((a, b) => a - b);
}

const figures = (engine: string, l: number[]) =>
  console.info(
    `${engine}: answer to wait's return, ms: p50 ${l[Math.floor(l.length / 2)]!.toFixed(0)}, max ${l.at(-1)!.toFixed(0)} (${l.length} rounds)`,
  );

describe('a wait for an answer, across stores on the same data', () => {
  it('SQLite: ends within the poll interval of another handle answering', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'notify-waits-')), 'notify.db');
    const [a, b] = [await openSqliteStore({ file, log: silentLogger }), await openSqliteStore({ file, log: silentLogger })];
    try {
      const l = await measure(a, b);
      figures('sqlite', l);
      expect(l.at(-1)).toBeLessThan(1_000);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it.skipIf(unavailable !== null)('PostgreSQL: ends within the poll interval of another replica answering', async () => {
    const schema = `notify_test_${randomBytes(6).toString('hex')}`;
    const a = await openPostgresStore({ connectionString: PG_URL, schema, log: silentLogger });
    const b = await openPostgresStore({ connectionString: PG_URL, schema, log: silentLogger });
    try {
      const l = await measure(a, b);
      figures('postgres', l);
      expect(l.at(-1)).toBeLessThan(1_000);
    } finally {
      await a.close();
      await b.close();
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });
});
