/**
 * The store as it is, read without changing it (`notify-mcp doctor`): whether there is one,
 * and its schema version against this build's. Opening a store migrates it; this does not,
 * and it never creates a SQLite file where there is none.
 */
import { existsSync } from 'node:fs';
import type { StoreSettings } from './index.js';
import { LATEST_VERSION } from './migrations.js';
import { openDriver } from './sqlite/connection.js';
import { sqliteFile } from './sqlite/store.js';

export interface StoreState {
  kind: 'sqlite' | 'postgres';
  /** The SQLite file, or the PostgreSQL host and database (never the credentials). */
  where: string;
  /** The applied schema version; null when there is no SQLite file yet. */
  version: number | null;
  latest: number;
}

export async function inspectStore(config: StoreSettings, timeoutMs: number): Promise<StoreState> {
  if (config.databaseUrl) {
    const url = new URL(config.databaseUrl);
    const where = `${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: config.databaseUrl, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
    await client.connect();
    try {
      const { rows } = await client.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
      if (!rows[0]?.t) return { kind: 'postgres', where, version: 0, latest: LATEST_VERSION };
      const max = await client.query<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations');
      return { kind: 'postgres', where, version: max.rows[0]?.v ?? 0, latest: LATEST_VERSION };
    } finally {
      await client.end();
    }
  }
  const file = sqliteFile(config.dataDir);
  if (!existsSync(file)) return { kind: 'sqlite', where: file, version: null, latest: LATEST_VERSION };
  const Database = (await import('better-sqlite3')).default;
  const db = openDriver(Database, file, { readonly: true, fileMustExist: true });
  try {
    const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    const row = table ? (db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null }) : undefined;
    return { kind: 'sqlite', where: file, version: row?.v ?? 0, latest: LATEST_VERSION };
  } finally {
    db.close();
  }
}
