import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../src/log.js';
import { openStore } from '../src/store/index.js';
import { MIGRATIONS } from '../src/store/migrations.js';
import { openSqliteStore, SqliteStore } from '../src/store/sqlite.js';
import { storeSuite } from './store.suite.js';
import { loadConfig } from '../src/config.js';

storeSuite('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-store-'));
  const file = join(dir, 'nested', 'notify.db');
  const store = await openSqliteStore({ file, log: silentLogger });
  const others: SqliteStore[] = [];
  return {
    store,
    async reopen() {
      const s = await openSqliteStore({ file, log: silentLogger });
      others.push(s);
      return s;
    },
    async cleanup() {
      await store.close();
      for (const s of others) await s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SQLite store specifics', () => {
  it('opens <dataDir>/notify.db through openStore, in WAL mode, with every migration recorded once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-store-'));
    try {
      const config = loadConfig({ NOTIFY_DATA_DIR: join(dir, 'data') });
      const store = await openStore(config, silentLogger);
      expect(store.kind).toBe('sqlite');
      await store.close();
      const again = await openSqliteStore({ file: join(dir, 'data', 'notify.db'), log: silentLogger });
      expect(again.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(again.db.pragma('busy_timeout', { simple: true })).toBe(10_000);
      const versions = again.db.prepare('SELECT version FROM schema_migrations ORDER BY version').all();
      expect(versions).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a database migrated by a newer build', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-store-'));
    try {
      const file = join(dir, 'notify.db');
      const s = await openSqliteStore({ file, log: silentLogger });
      s.db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, ?, 0)').run('future');
      await s.close();
      await expect(openSqliteStore({ file, log: silentLogger })).rejects.toThrow(/schema version 999.*upgrade/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
