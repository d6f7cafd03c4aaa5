/**
 * Opens the configured store: PostgreSQL when DATABASE_URL is set (replicas share state),
 * otherwise SQLite at `<dataDir>/notify.db`. Migrations run before this resolves.
 */
import { existsSync } from 'node:fs';
import type { Logger } from '../core/log.js';
import { openSqliteStore, sqliteFile } from './sqlite/store.js';
import { StoreError } from './errors.js';
import type { Store } from './types.js';

export type { Store } from './types.js';
export { StoreError, StoreUnavailableError } from './errors.js';
export { sqliteFile } from './sqlite/store.js';

/** Where the store is: PostgreSQL when `databaseUrl` is set, else SQLite under `dataDir`. */
export interface StoreSettings {
  dataDir: string;
  databaseUrl?: string;
}

/**
 * `existing`: open only a store that is there (a reader such as `outbox`): a mistyped
 * NOTIFY_DATA_DIR is said, not answered with a new empty database.
 */
export async function openStore(config: StoreSettings, log: Logger, opts: { existing?: boolean } = {}): Promise<Store> {
  if (!config.databaseUrl && opts.existing && !existsSync(sqliteFile(config.dataDir))) {
    throw new StoreError(
      `Set NOTIFY_DATA_DIR to the directory the server uses (it logs its store "file" at start; default ~/.local/share/notify-mcp), ` +
        `or DATABASE_URL for PostgreSQL: there is no store at ${sqliteFile(config.dataDir)}, and nothing was created.`,
    );
  }
  if (config.databaseUrl) {
    // Loaded only when used: a SQLite deployment never needs pg in memory.
    const { openPostgresStore } = await import('./postgres/store.js');
    return openPostgresStore({ connectionString: config.databaseUrl, log });
  }
  return openSqliteStore({ file: sqliteFile(config.dataDir), log });
}
