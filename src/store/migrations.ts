/**
 * Versioned schema migrations, one ordered list for both stores. Each step has the same
 * meaning on SQLite and PostgreSQL; only the dialect differs. A step, once released, is
 * never edited: a change is a new step. Applied versions live in `schema_migrations`.
 */
export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  postgres: string;
}

export const MIGRATIONS: readonly Migration[] = [
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
];

/** The newest schema version this build knows; a store newer than this refuses to open. */
export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
