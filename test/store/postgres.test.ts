/**
 * The shared store suite on PostgreSQL: DATABASE_URL when set (then it must answer), else
 * the local server, skipped with a message when it does not answer (test/helpers/postgres.ts).
 * Each store gets a fresh schema (search_path), dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { runIdempotent } from '../helpers/idempotent.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { openStore } from '../../src/store/index.js';
import type { DeliveryRecord } from '../../src/store/types.js';
import { loadConfig } from '../../src/config/config.js';
import { storeSuite } from './suite.js';
import { PG_URL, postgresSkipReason } from '../helpers/postgres.js';
import { bannerRecord } from '../helpers/banner-record.js';

const url = PG_URL;
const unavailable = await postgresSkipReason('store-postgres');

function freshSchema(): string {
  return `notify_test_${randomBytes(6).toString('hex')}`;
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

describe.skipIf(unavailable !== null)('PostgreSQL store', () => {
  storeSuite('postgres', async () => {
    const schema = freshSchema();
    const store = await openPostgresStore({ connectionString: url, schema, log: silentLogger });
    const others: PostgresStore[] = [];
    return {
      store,
      async reopen() {
        const s = await openPostgresStore({ connectionString: url, schema, log: silentLogger });
        others.push(s);
        return s;
      },
      async cleanup() {
        await store.close();
        for (const s of others) await s.close().catch(() => {});
        await dropSchema(schema);
      },
    };
  });

  it('migrates once when several replicas start together (advisory lock)', async () => {
    const schema = freshSchema();
    try {
      const stores = await Promise.all(
        Array.from({ length: 5 }, () => openPostgresStore({ connectionString: url, schema, log: silentLogger, max: 2 })),
      );
      const { rows } = await stores[0]!.pool.query('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
      await Promise.all(stores.map((s) => s.close()));
    } finally {
      await dropSchema(schema);
    }
  });

  it('commits only the idempotency claim without waiting for its flush: the connection flushes every later write', async () => {
    // One connection, so the fenced writes after the claim run where the claim ran. Were the
    // claim's setting to outlive its statement, the `sending` write before a provider call
    // could be lost in a crash together with its claim, and a duplicate would send again.
    const schema = freshSchema();
    const store = await openPostgresStore({ connectionString: url, schema, log: silentLogger, max: 1 });
    try {
      const claim = await store.claimIdempotency('k-flush', 'h', Date.now(), { ttlMs: 60_000, staleAfterMs: 20_000 });
      if (claim.kind !== 'claimed') throw new Error('expected a claim');
      const { rows } = await store.pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
      expect(rows).toEqual([{ synchronous_commit: 'on' }]);
      expect(await store.markIdempotencySending('k-flush', claim.owner)).toBe(true);
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  });

  it('a keyed dry run is the claim (opt-outs included), then one transaction: the record completing it, and its audit entries', async () => {
    const schema = freshSchema();
    const store = await openPostgresStore({ connectionString: url, schema, log: silentLogger });
    const query = pg.Client.prototype.query;
    let sent = 0;
    // Counted where every statement goes out, pooled or on a checked-out client.
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      sent++;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      const now = Date.now();
      // The first claim also purges expired keys (then once a minute).
      await store.claimIdempotency('k-warm', 'h', now, { ttlMs: 60_000, staleAfterMs: 20_000 });
      sent = 0;
      const claim = await store.claimIdempotency('k-rt', 'h', now, {
        ttlMs: 60_000,
        staleAfterMs: 20_000,
        optOut: { via: 'sms', recipients: ['+14155550123'] },
      });
      if (claim.kind !== 'claimed') throw new Error('expected a claim');
      expect(sent).toBe(1);
      const record: DeliveryRecord = {
        id: 'ntf_rt',
        via: 'sms',
        status: 'dry_run',
        provider: 'dry-run',
        provider_message_id: null,
        payload: { to: '+14155550123', body: 'hi' },
        error_code: null,
        attempts: 0,
        attempt_log: [],
        latency_ms: 0,
        client: null,
        idempotency_key: 'k-rt',
        created_at: now,
        provider_status: null,
        provider_status_code: null,
        status_updated_at: now,
        approval: null,
      };
      expect(await store.writeRecord(record, { claim: { key: 'k-rt', owner: claim.owner, result: { id: 'ntf_rt' } } })).toEqual({
        kind: 'written',
      });
      // BEGIN, the record completing the claim, the audit head's lock, the entries with the head moved, COMMIT.
      expect(sent).toBe(6);
      expect((await store.auditHead()).seq).toBe(1);
    } finally {
      pg.Client.prototype.query = query;
      await store.close();
      await dropSchema(schema);
    }
  });

  it('runIdempotent: 50 simultaneous duplicates over 4 pools make one send, all with its result', async () => {
    const schema = freshSchema();
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => openPostgresStore({ connectionString: url, schema, log: silentLogger, max: 5 })),
    );
    try {
      let calls = 0;
      const send = async () => {
        calls++;
        await new Promise((r) => setTimeout(r, 100));
        return { id: 'ntf_pg_once' };
      };
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          runIdempotent({ store: stores[i % 4]!, key: 'burst', payloadHash: 'h', budgetMs: 10_000, pollMs: 10 }, send),
        ),
      );
      expect(calls).toBe(1);
      expect(outcomes.filter((o) => o.replayed)).toHaveLength(49);
      expect(outcomes.every((o) => (o.result as { id: string }).id === 'ntf_pg_once')).toBe(true);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await dropSchema(schema);
    }
  });

  it('openStore picks PostgreSQL when DATABASE_URL is set', async () => {
    const schema = freshSchema();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
    try {
      const withSchema = new URL(url);
      withSchema.searchParams.set('options', `-c search_path=${schema}`);
      const store = await openStore(
        loadConfig({ DATABASE_URL: withSchema.toString(), NOTIFY_DATA_DIR: '/nonexistent/never-created' }),
        silentLogger,
      );
      try {
        expect(store.kind).toBe('postgres');
        expect(await store.listBanners({ now: 0 })).toEqual([]);
        const check = new pg.Client({ connectionString: url });
        await check.connect();
        const { rows } = await check.query(`SELECT count(*)::int AS n FROM ${schema}.schema_migrations`);
        await check.end();
        expect(rows[0].n).toBe(MIGRATIONS.length);
      } finally {
        await store.close();
      }
    } finally {
      await dropSchema(schema);
    }
  });

  it('upgrades a version-3 database: a claim left pending by an older build counts as sending', async () => {
    const schema = freshSchema();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA ${schema}; SET search_path = ${schema}`);
      await admin.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
      for (const m of MIGRATIONS.filter((m) => m.version <= 3)) {
        await admin.query(m.postgres);
        await admin.query('INSERT INTO schema_migrations VALUES ($1, $2, 0)', [m.version, m.name]);
      }
      await admin.query(
        `INSERT INTO idempotency_keys (key, payload_hash, state, result, claimed_at) VALUES ('mid-send', 'h', 'pending', NULL, 1000), ('finished', 'h', 'done', '{"id":"ntf_old"}', 1000)`,
      );
      const store = await openPostgresStore({ connectionString: url, schema, log: silentLogger });
      try {
        const opts = { ttlMs: 86_400_000, staleAfterMs: 500 };
        expect(await store.claimIdempotency('mid-send', 'h', 1001, opts)).toMatchObject({ state: 'pending', phase: 'sending' });
        expect(await store.completeIdempotency('mid-send', 'null', { id: 'x' })).toBe(false);
        expect(await store.claimIdempotency('mid-send', 'h', 1500, opts)).toMatchObject({ kind: 'claimed', phase: 'sending' });
        expect(await store.claimIdempotency('finished', 'h', 1500, opts)).toMatchObject({ state: 'done', result: { id: 'ntf_old' } });
        expect(await store.claimIdempotency('new', 'h', 1500, opts)).toMatchObject({ kind: 'claimed', phase: 'claimed' });
      } finally {
        await store.close();
      }
    } finally {
      await admin.end();
      await dropSchema(schema);
    }
  });

  it('refuses a database migrated by a newer build', async () => {
    const schema = freshSchema();
    try {
      const s = await openPostgresStore({ connectionString: url, schema, log: silentLogger });
      await s.pool.query(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)`);
      await s.close();
      await expect(openPostgresStore({ connectionString: url, schema, log: silentLogger })).rejects.toThrow(/schema version 999.*upgrade/);
    } finally {
      await dropSchema(schema);
    }
  });

  it('a connection reset while a banner transaction holds its client fails that call, not the process', async () => {
    // A TCP proxy in front of PostgreSQL, so the test can cut the store's connections.
    const target = new URL(url);
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((inbound) => {
      const outbound = net.connect(Number(target.port || 5432), target.hostname);
      for (const s of [inbound, outbound]) {
        sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => sockets.delete(s));
      }
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String((proxy.address() as net.AddressInfo).port);
    const schema = freshSchema();
    const store = await openPostgresStore({ connectionString: proxied.toString(), schema, log: silentLogger });
    // Hold the banner's dedupe lock from outside, so showing it waits with its client checked out.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    const crashes: unknown[] = [];
    const onUncaught = (err: unknown) => crashes.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const banner = bannerRecord(Date.now(), { audience: 'ops', dedupe_key: 'db-down' });
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtext(json_build_array('notify-mcp:banner-dedupe', $1::text, $2::text)::text))`, [
        banner.audience,
        banner.dedupe_key,
      ]);
      const insert = store.insertBanner(banner);
      const outcome = insert.then(
        () => 'inserted',
        (err: Error) => err.message,
      );
      await new Promise((r) => setTimeout(r, 300));
      for (const s of sockets) s.destroy(new Error('cut'));
      expect(await outcome).not.toBe('inserted');
      await holder.query('ROLLBACK');
      // The store keeps serving through a new connection.
      expect(await store.insertBanner(bannerRecord(Date.now(), { audience: 'ops', dedupe_key: 'db-down' }))).toMatchObject({
        audience: 'ops',
      });
      await new Promise((r) => setTimeout(r, 100));
      expect(crashes).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await holder.end().catch(() => {});
      await store.close().catch(() => {});
      proxy.close();
      await dropSchema(schema);
    }
  });
});
