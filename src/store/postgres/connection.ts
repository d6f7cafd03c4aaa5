/**
 * Opening the PostgreSQL pool: a query timeout, idle-client errors kept from ending the
 * process, migrations under an advisory lock so replicas starting together migrate once, and
 * the shared statements run as named (prepared) queries.
 */
import pg from 'pg';
import type { Logger } from '../../core/log.js';
import { StoreError } from '../errors.js';
import { classifyStoreFault } from '../faults.js';
import { LATEST_VERSION, MIGRATIONS } from '../migrations.js';
import type { Dialect } from '../sql/dialect.js';
import type { Row } from '../sql/rows.js';

export interface PostgresStoreOptions {
  connectionString: string;
  log: Logger;
  /** Tables live in this schema (created if missing) instead of the default search_path; for tests. */
  schema?: string;
  /** Pool size (default 10). */
  max?: number;
}

/** Arbitrary but fixed: the advisory lock key that serialises migrations. */
const MIGRATION_LOCK = 7_301_775_001;
/** Longer than any statement here takes, advisory-lock waits included. */
const QUERY_TIMEOUT_MS = 15_000;
const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

export function postgresDialect(pool: pg.Pool): Dialect {
  const query = (s: { name: string; text: string }, values: readonly unknown[]) =>
    pool.query({ name: s.name, text: s.text, values: values as unknown[] });
  return {
    run: async (s, p) => (await query(s, p)).rowCount ?? 0,
    get: async (s, p) => (await query(s, p)).rows[0] as Row | undefined,
    all: async (s, p) => (await query(s, p)).rows as Row[],
    // jsonb and json columns arrive decoded.
    json: (v) => v,
  };
}

/**
 * Runs `fn` on a client of its own. pg-pool stops listening for a client's errors while it
 * is checked out, so a connection reset then would be an unhandled 'error' event that ends
 * the process: while held, an error is recorded and fails `fn`'s query instead, and the
 * broken client is discarded rather than returned to the pool.
 */
export async function withClient<T>(pool: pg.Pool, log: Logger, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken = err;
    log.warn('postgres connection lost while in use', { error: err.message });
  };
  client.on('error', onError);
  try {
    return await fn(client);
  } catch (err) {
    // A timed-out query may still be running on this connection: never hand it out again.
    if (classifyStoreFault(err, 'postgres')) broken ??= err as Error;
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

async function migrate(pool: pg.Pool, log: Logger, schema: string | undefined): Promise<void> {
  await withClient(pool, log, async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
      );
      const { rows } = await client.query<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations');
      const current = rows[0]?.v ?? 0;
      if (current > LATEST_VERSION) {
        throw new StoreError(
          `the PostgreSQL store is at schema version ${current}, newer than this build knows (${LATEST_VERSION}); upgrade notify-mcp`,
        );
      }
      let applied = 0;
      for (const m of MIGRATIONS) {
        if (m.version <= current) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.postgres);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
            m.version,
            m.name,
            Date.now(),
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
        log.debug('store migration applied', { store: 'postgres', version: m.version, migration: m.name });
        applied++;
      }
      // One line for the lot, as SQLite's (a line each buried the one that says the server is waiting).
      if (applied) log.info('store migrated', { store: 'postgres', from: current, to: LATEST_VERSION, migrations: applied });
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  });
}

/** A pool on a migrated database. */
export async function connectPool(opts: PostgresStoreOptions): Promise<pg.Pool> {
  if (opts.schema !== undefined && !SCHEMA_RE.test(opts.schema)) {
    throw new StoreError(`schema name "${opts.schema}" must match ${SCHEMA_RE.source}`);
  }
  const pool = new pg.Pool({
    connectionString: opts.connectionString,
    max: opts.max ?? 10,
    connectionTimeoutMillis: 10_000,
    // A database that stops answering without closing the connection (a partition) fails
    // the query instead of holding the call forever; the broken client is discarded.
    query_timeout: QUERY_TIMEOUT_MS,
    ...(opts.schema ? { options: `-c search_path=${opts.schema}` } : {}),
  });
  // An idle client's network error must not crash the process; the next query reconnects.
  pool.on('error', (err) => opts.log.warn('postgres idle client error', { error: err.message }));
  try {
    await migrate(pool, opts.log, opts.schema);
  } catch (err) {
    await pool.end().catch(() => {});
    if (err instanceof StoreError) throw err;
    throw new StoreError(`could not open the PostgreSQL store: ${(err as Error).message}`, { cause: err });
  }
  return pool;
}
