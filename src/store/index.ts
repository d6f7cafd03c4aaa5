/**
 * Opens the configured store: PostgreSQL when DATABASE_URL is set (replicas share state),
 * otherwise SQLite at `<dataDir>/notify.db`. Migrations run before this resolves.
 */
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { openSqliteStore, sqliteFile } from './sqlite.js';
import type { Store } from './types.js';

export type { Store } from './types.js';
export { StoreError, StoreUnavailableError } from './errors.js';

export async function openStore(config: Config, log: Logger): Promise<Store> {
  if (config.databaseUrl) {
    // Loaded only when used: a SQLite deployment never needs pg in memory.
    const { openPostgresStore } = await import('./postgres.js');
    return openPostgresStore({ connectionString: config.databaseUrl, log });
  }
  return openSqliteStore({ file: sqliteFile(config.dataDir), log });
}
