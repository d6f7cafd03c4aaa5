/**
 * Schema steps 1 to 11: deliveries, idempotency claims, opt-outs, banners, rate limits,
 * receipts and first contacts (../migrations.ts: released steps are never edited).
 */
import type { Migration } from './migration.js';

export const SENDS_AND_RECEIPTS: readonly Migration[] = [
  {
    version: 1,
    name: 'deliveries, idempotency keys, opt-outs, banners',
    sqlite: `
      CREATE TABLE deliveries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        via TEXT NOT NULL,
        status TEXT NOT NULL,
        provider TEXT NOT NULL,
        provider_message_id TEXT,
        payload TEXT NOT NULL,
        error_code TEXT,
        attempts INTEGER NOT NULL,
        latency_ms INTEGER NOT NULL,
        client TEXT,
        idempotency_key TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX deliveries_created ON deliveries (created_at DESC, seq DESC);

      CREATE TABLE idempotency_keys (
        key TEXT PRIMARY KEY,
        payload_hash TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'done')),
        result TEXT,
        claimed_at INTEGER NOT NULL
      );
      CREATE INDEX idempotency_keys_claimed ON idempotency_keys (claimed_at);

      CREATE TABLE opt_outs (
        via TEXT NOT NULL,
        recipient TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (via, recipient)
      );

      CREATE TABLE banners (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        text TEXT NOT NULL,
        audience TEXT NOT NULL,
        severity TEXT NOT NULL,
        dedupe_key TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        dismissed_at INTEGER
      );
      CREATE INDEX banners_audience ON banners (audience, created_at DESC);
      CREATE INDEX banners_dedupe ON banners (dedupe_key) WHERE dedupe_key IS NOT NULL;
    `,
    postgres: `
      CREATE TABLE deliveries (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        via TEXT NOT NULL,
        status TEXT NOT NULL,
        provider TEXT NOT NULL,
        provider_message_id TEXT,
        payload JSON NOT NULL,
        error_code TEXT,
        attempts INTEGER NOT NULL,
        latency_ms INTEGER NOT NULL,
        client TEXT,
        idempotency_key TEXT,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX deliveries_created ON deliveries (created_at DESC, seq DESC);

      CREATE TABLE idempotency_keys (
        key TEXT PRIMARY KEY,
        payload_hash TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'done')),
        result JSON,
        claimed_at BIGINT NOT NULL
      );
      CREATE INDEX idempotency_keys_claimed ON idempotency_keys (claimed_at);

      CREATE TABLE opt_outs (
        via TEXT NOT NULL,
        recipient TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (via, recipient)
      );

      CREATE TABLE banners (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        text TEXT NOT NULL,
        audience TEXT NOT NULL,
        severity TEXT NOT NULL,
        dedupe_key TEXT,
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        dismissed_at BIGINT
      );
      CREATE INDEX banners_audience ON banners (audience, created_at DESC);
      CREATE INDEX banners_dedupe ON banners (dedupe_key) WHERE dedupe_key IS NOT NULL;
    `,
  },
  {
    version: 2,
    name: 'banner feed indexes, banners change counter',
    // banners_newest: any-status listing by audience, newest first, with the seq tie-break in
    // the index (SQLite's implicit rowid suffix is ascending, so the old index could not
    // serve `created_at DESC, seq DESC` without a sort). banners_active: the feed; dismissed
    // rows are not in it, and expires_at rides along so expired rows are skipped from the
    // index alone. banners_version: bumped by triggers on every change to banners, so a
    // cached feed is validated by reading one row; the random epoch tells a recreated
    // database from the one a cache was filled from.
    sqlite: `
      DROP INDEX banners_audience;
      CREATE INDEX banners_newest ON banners (audience, created_at DESC, seq DESC);
      CREATE INDEX banners_active ON banners (audience, created_at DESC, seq DESC, expires_at) WHERE dismissed_at IS NULL;

      CREATE TABLE banners_version (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        epoch TEXT NOT NULL,
        n INTEGER NOT NULL
      );
      INSERT INTO banners_version (id, epoch, n) VALUES (1, lower(hex(randomblob(8))), 0);
      CREATE TRIGGER banners_version_insert AFTER INSERT ON banners BEGIN UPDATE banners_version SET n = n + 1 WHERE id = 1; END;
      CREATE TRIGGER banners_version_update AFTER UPDATE ON banners BEGIN UPDATE banners_version SET n = n + 1 WHERE id = 1; END;
      CREATE TRIGGER banners_version_delete AFTER DELETE ON banners BEGIN UPDATE banners_version SET n = n + 1 WHERE id = 1; END;
    `,
    postgres: `
      DROP INDEX banners_audience;
      CREATE INDEX banners_newest ON banners (audience, created_at DESC, seq DESC);
      CREATE INDEX banners_active ON banners (audience, created_at DESC, seq DESC, expires_at) WHERE dismissed_at IS NULL;

      CREATE TABLE banners_version (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        epoch TEXT NOT NULL,
        n BIGINT NOT NULL
      );
      INSERT INTO banners_version (id, epoch, n) VALUES (1, substr(md5(random()::text || clock_timestamp()::text), 1, 16), 0);
      -- search_path pinned: a writer whose session has another search_path bumps this counter.
      CREATE FUNCTION banners_version_bump() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
        BEGIN UPDATE banners_version SET n = n + 1 WHERE id = 1; RETURN NULL; END $$;
      CREATE TRIGGER banners_version_change AFTER INSERT OR UPDATE OR DELETE ON banners
        FOR EACH ROW EXECUTE FUNCTION banners_version_bump();
      -- TRUNCATE fires no row triggers.
      CREATE TRIGGER banners_version_truncate AFTER TRUNCATE ON banners
        FOR EACH STATEMENT EXECUTE FUNCTION banners_version_bump();
    `,
  },
  {
    version: 3,
    name: 'per-attempt log on deliveries',
    // One entry per provider call (outcome, vendor code, latency): what a retried send did.
    sqlite: `ALTER TABLE deliveries ADD COLUMN attempt_log TEXT NOT NULL DEFAULT '[]';`,
    postgres: `ALTER TABLE deliveries ADD COLUMN attempt_log JSON NOT NULL DEFAULT '[]';`,
  },
  {
    version: 4,
    name: 'idempotency claim owner and phase',
    // Fencing: every write after a claim names its owner, so an owner that lost its claim
    // changes nothing; `phase` says whether the provider call may have started. A row
    // claimed before this version may have been mid-send, so it counts as `sending`: a
    // takeover answers DELIVERY_UNKNOWN instead of risking a second send. Its owner is NULL,
    // which no fenced write matches.
    sqlite: `
      ALTER TABLE idempotency_keys ADD COLUMN owner TEXT;
      ALTER TABLE idempotency_keys ADD COLUMN phase TEXT NOT NULL DEFAULT 'sending' CHECK (phase IN ('claimed', 'sending'));
    `,
    postgres: `
      ALTER TABLE idempotency_keys ADD COLUMN owner TEXT;
      ALTER TABLE idempotency_keys ADD COLUMN phase TEXT NOT NULL DEFAULT 'sending' CHECK (phase IN ('claimed', 'sending'));
    `,
  },
  {
    version: 5,
    name: 'banner dedupe keys scoped to their audience',
    // A dedupe key is scoped to its audience (the same key in another audience is another
    // banner), so the index leads with the audience. No data changes: an older build allowed
    // one active banner per key across all audiences, which is a subset of what this allows.
    sqlite: `
      DROP INDEX banners_dedupe;
      CREATE INDEX banners_dedupe ON banners (audience, dedupe_key) WHERE dedupe_key IS NOT NULL;
    `,
    postgres: `
      DROP INDEX banners_dedupe;
      CREATE INDEX banners_dedupe ON banners (audience, dedupe_key) WHERE dedupe_key IS NOT NULL;
    `,
  },
  {
    version: 6,
    name: 'rate-limit admissions',
    // One row per admission per bucket, so replicas share one sliding window. A row counts
    // while expires_at (admission time + the window) is after now; expired rows are deleted.
    sqlite: `
      CREATE TABLE rate_admissions (
        bucket TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX rate_admissions_bucket ON rate_admissions (bucket, expires_at);
      CREATE INDEX rate_admissions_expiry ON rate_admissions (expires_at);
    `,
    postgres: `
      CREATE TABLE rate_admissions (
        bucket TEXT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX rate_admissions_bucket ON rate_admissions (bucket, expires_at);
      CREATE INDEX rate_admissions_expiry ON rate_admissions (expires_at);
    `,
  },
  {
    version: 7,
    name: 'notification status from provider receipts',
    // The provider's last word on a message, and an index to find a delivery by the id a
    // receipt names. A send that ended DELIVERY_UNKNOWN was recorded `failed`; its truthful
    // state is `unknown` (the provider may have sent it), which a receipt may still settle.
    sqlite: `
      ALTER TABLE deliveries ADD COLUMN provider_status TEXT;
      ALTER TABLE deliveries ADD COLUMN provider_status_code TEXT;
      ALTER TABLE deliveries ADD COLUMN status_updated_at INTEGER;
      UPDATE deliveries SET status_updated_at = created_at;
      UPDATE deliveries SET status = 'unknown' WHERE status = 'failed' AND error_code = 'DELIVERY_UNKNOWN';
      CREATE INDEX deliveries_provider_message ON deliveries (via, provider_message_id) WHERE provider_message_id IS NOT NULL;
    `,
    postgres: `
      ALTER TABLE deliveries ADD COLUMN provider_status TEXT;
      ALTER TABLE deliveries ADD COLUMN provider_status_code TEXT;
      ALTER TABLE deliveries ADD COLUMN status_updated_at BIGINT;
      UPDATE deliveries SET status_updated_at = created_at;
      UPDATE deliveries SET status = 'unknown' WHERE status = 'failed' AND error_code = 'DELIVERY_UNKNOWN';
      CREATE INDEX deliveries_provider_message ON deliveries (via, provider_message_id) WHERE provider_message_id IS NOT NULL;
    `,
  },
  {
    version: 8,
    name: 'approval on deliveries, approved first contacts',
    // approval: what a person was asked and answered for a send (NULL: no approval applied).
    // contacts: recipients a person approved a first contact with, shared by replicas.
    sqlite: `
      ALTER TABLE deliveries ADD COLUMN approval TEXT;
      CREATE TABLE contacts (
        via TEXT NOT NULL,
        recipient TEXT NOT NULL,
        approved_at INTEGER NOT NULL,
        client TEXT,
        PRIMARY KEY (via, recipient)
      );
    `,
    postgres: `
      ALTER TABLE deliveries ADD COLUMN approval JSON;
      CREATE TABLE contacts (
        via TEXT NOT NULL,
        recipient TEXT NOT NULL,
        approved_at BIGINT NOT NULL,
        client TEXT,
        PRIMARY KEY (via, recipient)
      );
    `,
  },
  {
    version: 9,
    name: 'provider receipts held for deliveries not yet recorded',
    // A verified receipt can arrive before its send's record (the provider's callback beats
    // its own API answer): it waits here, in arrival order (seq), until the record lands and
    // takes it. Bounded by age and row count in src/notification/status-receipt.ts.
    sqlite: `
      CREATE TABLE held_receipts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        via TEXT NOT NULL,
        provider_message_id TEXT NOT NULL,
        event TEXT NOT NULL,
        provider_status TEXT NOT NULL,
        provider_status_code TEXT,
        received_at INTEGER NOT NULL
      );
      CREATE INDEX held_receipts_message ON held_receipts (via, provider_message_id);
      CREATE INDEX held_receipts_received ON held_receipts (received_at);
    `,
    postgres: `
      CREATE TABLE held_receipts (
        seq BIGSERIAL PRIMARY KEY,
        via TEXT NOT NULL,
        provider_message_id TEXT NOT NULL,
        event TEXT NOT NULL,
        provider_status TEXT NOT NULL,
        provider_status_code TEXT,
        received_at BIGINT NOT NULL
      );
      CREATE INDEX held_receipts_message ON held_receipts (via, provider_message_id);
      CREATE INDEX held_receipts_received ON held_receipts (received_at);
    `,
  },
  {
    version: 10,
    name: 'held receipts: our notification id, and one row per distinct receipt',
    // A receipt whose send's answer was lost is found by the notification id the callback URL
    // carries; a replayed callback is the row it repeats (fingerprint: its channel, ids,
    // status and code), so replays cannot fill the table.
    sqlite: `
      ALTER TABLE held_receipts ADD COLUMN notification_id TEXT;
      ALTER TABLE held_receipts ADD COLUMN fingerprint TEXT;
      CREATE UNIQUE INDEX held_receipts_fingerprint ON held_receipts (fingerprint);
      CREATE INDEX held_receipts_notification ON held_receipts (notification_id);
    `,
    postgres: `
      ALTER TABLE held_receipts ADD COLUMN notification_id TEXT;
      ALTER TABLE held_receipts ADD COLUMN fingerprint TEXT;
      CREATE UNIQUE INDEX held_receipts_fingerprint ON held_receipts (fingerprint);
      CREATE INDEX held_receipts_notification ON held_receipts (notification_id);
    `,
  },
  {
    version: 11,
    name: 'idempotency claims carry their notification id',
    // A claim taken over after its provider call may have started answers DELIVERY_UNKNOWN;
    // the id lets that answer name the notification, and status and receipts settle it.
    // Rows claimed before this version have none (NULL).
    sqlite: `ALTER TABLE idempotency_keys ADD COLUMN notification_id TEXT;`,
    postgres: `ALTER TABLE idempotency_keys ADD COLUMN notification_id TEXT;`,
  },
];
