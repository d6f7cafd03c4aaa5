import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { openStore } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { openSqliteStore, SqliteStore } from '../../src/store/sqlite/store.js';
import Database from 'better-sqlite3';
import { storeSuite } from './suite.js';
import { loadConfig } from '../../src/config/config.js';

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

/** A database as an older build left it: migrations up to `version` applied and recorded. */
function databaseAt(file: string, version: number): Database.Database {
  const db = new Database(file);
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  for (const m of MIGRATIONS.filter((m) => m.version <= version)) {
    db.exec(m.sqlite);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(m.version, m.name);
  }
  return db;
}

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
      // SQLite's own (synchronous) wait for a lock is short once open; longer waits are on
      // timers between attempts (test/store/faults.test.ts), so a lock never holds the event loop.
      expect(again.db.pragma('busy_timeout', { simple: true })).toBeLessThanOrEqual(50);
      const versions = again.db.prepare('SELECT version FROM schema_migrations ORDER BY version').all();
      expect(versions).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads one notification's audit entries by the notification index, not by walking the log", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-store-'));
    try {
      const store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
      try {
        // The only index the audit keeps (migration 21 dropped the time index nothing planned with).
        expect(store.db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'audit_log'`).all()).toEqual([
          { name: 'audit_log_notification' },
        ]);
        const { AUDIT_FOR } = await import('../../src/store/sql/audit.js');
        const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${AUDIT_FOR.text.replace(/\$\d+/g, '?')}`).all('ntf_1', 10) as {
          detail: string;
        }[];
        expect(plan.map((p) => p.detail).join(' | ')).toMatch(/USING INDEX audit_log_notification \(notification_id=\?\)$/);
      } finally {
        await store.close();
      }
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

  it('upgrades a version-1 database that holds banners: feed indexes, version counter, same listing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-store-'));
    try {
      const file = join(dir, 'notify.db');
      const v1 = new Database(file);
      v1.exec(MIGRATIONS[0]!.sqlite);
      v1.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
      v1.prepare('INSERT INTO schema_migrations VALUES (1, ?, 0)').run(MIGRATIONS[0]!.name);
      const insert = v1.prepare(
        `INSERT INTO banners (id, text, audience, severity, dedupe_key, created_at, expires_at, dismissed_at) VALUES (?, 't', ?, 'info', NULL, ?, NULL, NULL)`,
      );
      for (let i = 0; i < 30; i++) insert.run(`bnr_${i}`, i % 2 ? 'all' : 'admins', 1000 + Math.floor(i / 3));
      v1.close();

      const store = await openSqliteStore({ file, log: silentLogger });
      try {
        const names = store.db.prepare(`SELECT name FROM sqlite_master WHERE tbl_name = 'banners' AND type = 'index'`).all();
        expect(names.map((r) => (r as { name: string }).name).sort()).toEqual(expect.arrayContaining(['banners_active', 'banners_newest']));
        const ids = (await store.listBanners({ audiences: ['all', 'admins'], status: 'active', now: 2000, limit: 5 })).map((b) => b.id);
        // created_at 1009 holds bnr_27..29; ties newest-inserted first.
        expect(ids).toEqual(['bnr_29', 'bnr_28', 'bnr_27', 'bnr_26', 'bnr_25']);
        const v = await store.bannersVersion();
        await store.dismissBanner('bnr_29', 2000);
        expect(await store.bannersVersion()).not.toBe(v);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('upgrades a version-3 database: a claim left pending by an older build counts as sending', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-store-'));
    try {
      const file = join(dir, 'notify.db');
      const v3 = databaseAt(file, 3);
      const row = v3.prepare(`INSERT INTO idempotency_keys (key, payload_hash, state, result, claimed_at) VALUES (?, 'h', ?, ?, 1000)`);
      row.run('mid-send', 'pending', null);
      row.run('finished', 'done', JSON.stringify({ id: 'ntf_old' }));
      v3.close();

      const store = await openSqliteStore({ file, log: silentLogger });
      try {
        const opts = { ttlMs: 86_400_000, staleAfterMs: 500 };
        expect(await store.claimIdempotency('mid-send', 'h', 1001, opts)).toMatchObject({ state: 'pending', phase: 'sending' });
        // Its owner is unknown (NULL): no fenced write matches it.
        expect(await store.completeIdempotency('mid-send', 'null', { id: 'x' })).toBe(false);
        // A takeover must not send: the older build may have called the provider.
        expect(await store.claimIdempotency('mid-send', 'h', 1500, opts)).toMatchObject({ kind: 'claimed', phase: 'sending' });
        expect(await store.claimIdempotency('finished', 'h', 1500, opts)).toMatchObject({ state: 'done', result: { id: 'ntf_old' } });
        expect(await store.claimIdempotency('new', 'h', 1500, opts)).toMatchObject({ kind: 'claimed', phase: 'claimed' });
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('upgrades a version-6 database: a lost outcome once recorded failed becomes unknown, every record gets its status time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-store-'));
    try {
      const file = join(dir, 'notify.db');
      const v6 = databaseAt(file, 6);
      const row = v6.prepare(
        `INSERT INTO deliveries (id, via, status, provider, provider_message_id, payload, error_code, attempts, latency_ms, client, idempotency_key, created_at)
         VALUES (?, 'sms', ?, 'twilio', ?, '{}', ?, 1, 5, 'bot', NULL, ?)`,
      );
      row.run('ntf_lost', 'failed', null, 'DELIVERY_UNKNOWN', 1000);
      row.run('ntf_refused', 'failed', null, 'PROVIDER_REJECTED', 2000);
      row.run('ntf_sent', 'sent', 'SM1', null, 3000);
      v6.close();

      const store = await openSqliteStore({ file, log: silentLogger });
      try {
        expect(await store.getDelivery('ntf_lost')).toMatchObject({ status: 'unknown', status_updated_at: 1000, provider_status: null });
        expect(await store.getDelivery('ntf_refused')).toMatchObject({ status: 'failed', status_updated_at: 2000 });
        expect((await store.findDeliveryByProviderMessage('sms', 'SM1'))?.id).toBe('ntf_sent');
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("upgrades a version-26 database: an escalation step's link, kept as its recipient, becomes a token sent in that step", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-store-'));
    try {
      const file = join(dir, 'notify.db');
      const v26 = databaseAt(file, 26);
      v26
        .prepare(
          `INSERT INTO questions (notification_id, prompt, choices, expires_in_s, created_at, client) VALUES ('ntf_root', 'Disk', '["Acknowledge"]', 600, 1, 'bot')`,
        )
        .run();
      const token = v26.prepare('INSERT INTO question_tokens (sha256, notification_id, recipient) VALUES (?, ?, ?)');
      const step = `ntf_${'0123456789abcdef'.repeat(2)}`;
      token.run('a'.repeat(64), 'ntf_root', step);
      // Recipients that only look like ids stay recipients.
      token.run('b'.repeat(64), 'ntf_root', 'ntf_lead@example.com');
      token.run('c'.repeat(64), 'ntf_root', '+14155550100');
      v26.close();

      const store = await openSqliteStore({ file, log: silentLogger });
      try {
        expect(await store.questionByToken('a'.repeat(64))).toMatchObject({ notification_id: 'ntf_root', sent_in: step });
        expect((await store.unansweredQuestionsTo(step, 5)).length).toBe(0);
        expect((await store.unansweredQuestionsTo('ntf_lead@example.com', 5)).map((q) => q.sent_in)).toEqual([undefined]);
        expect((await store.unansweredQuestionsTo('+14155550100', 5)).map((q) => q.notification_id)).toEqual(['ntf_root']);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers the feed query from the partial index, without sorting the matching rows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-store-'));
    try {
      const store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
      try {
        // The statement listBanners prepares for an active feed (INDEXED BY makes it fail if unusable).
        const plan = store.db
          .prepare(
            `EXPLAIN QUERY PLAN SELECT seq, id FROM banners INDEXED BY banners_active WHERE audience = ?
             AND (dismissed_at IS NULL AND (expires_at IS NULL OR expires_at > ?)) ORDER BY created_at DESC, seq DESC LIMIT 50`,
          )
          .all('all', 0) as { detail: string }[];
        const text = plan.map((p) => p.detail).join('\n');
        expect(text).toMatch(/USING INDEX banners_active \(audience=\?\)/);
        expect(text).not.toMatch(/TEMP B-TREE/);
        await store.listBanners({ audiences: ['all', 'admins'], status: 'active', now: 0, limit: 50 });
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
