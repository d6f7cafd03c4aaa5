/**
 * The two engines as the audit tests open them: a fresh store, raw SQL on its own storage (the
 * SQLite file, the PostgreSQL table) as someone with the file or a superuser would use it, and
 * a second store on the same data (another process, another replica).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { silentLogger } from '../../src/core/log.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { AuditEntry, DeliveryRecord, Store } from '../../src/store/types.js';
import { PG_URL, postgresSkipReason } from '../helpers/postgres.js';
import { delivery } from './suite.js';

export const unavailable = await postgresSkipReason('store-audit');
export const T0 = Date.UTC(2026, 11, 1);

/** suite.ts's delivery, as a dry run of a mail with a bcc'd recipient and no attempts, from ops-bot. */
export function record(id: string, at: number, extra: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return delivery(id, at, {
    payload: {
      envelope: { from: 'ops@example.com', to: ['alice@example.com', 'hidden-bcc@evil.example'] },
      raw: 'Subject: secret plans\r\n\r\nthe body',
    },
    attempts: 0,
    attempt_log: [],
    latency_ms: 1,
    client: 'ops-bot',
    ...extra,
  });
}

/** Raw SQL on the engine's own storage, as someone with the database file or a superuser would. */
export interface Raw {
  all(sql: string): Promise<Record<string, unknown>[]>;
  run(sql: string, params?: unknown[]): Promise<void>;
}

export interface Engine {
  store: Store;
  raw: Raw;
  second(): Promise<Store>;
  close(): Promise<void>;
}

export async function sqliteEngine(): Promise<Engine> {
  const dir = mkdtempSync(join(tmpdir(), 'notify-audit-'));
  const file = join(dir, 'notify.db');
  const store = await openSqliteStore({ file, log: silentLogger });
  const db = new Database(file);
  const others: Store[] = [];
  return {
    store,
    raw: {
      all: async (sql) => db.prepare(sql).all() as Record<string, unknown>[],
      run: async (sql, params = []) => void db.prepare(sql.replace(/\$\d+/g, '?')).run(...params),
    },
    async second() {
      const s = await openSqliteStore({ file, log: silentLogger });
      others.push(s);
      return s;
    },
    async close() {
      db.close();
      await store.close();
      for (const s of others) await s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function postgresEngine(): Promise<Engine> {
  const schema = `notify_audit_${randomBytes(6).toString('hex')}`;
  const store = await openPostgresStore({ connectionString: PG_URL, schema, log: silentLogger });
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`SET search_path TO ${schema}`);
  const others: Store[] = [];
  return {
    store,
    raw: {
      all: async (sql) => (await client.query(sql)).rows,
      run: async (sql, params = []) => void (await client.query(sql, params)),
    },
    async second() {
      const s = await openPostgresStore({ connectionString: PG_URL, schema, log: silentLogger });
      others.push(s);
      return s;
    },
    async close() {
      await store.close();
      for (const s of others) await s.close();
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    },
  };
}

export const ENGINES: [string, () => Promise<Engine>, boolean][] = [
  ['sqlite', sqliteEngine, false],
  ['postgres', postgresEngine, unavailable !== null],
];

export async function entries(store: Store): Promise<AuditEntry[]> {
  return store.auditEntries({ afterSeq: Number.MIN_SAFE_INTEGER, limit: 100_000 });
}
