/**
 * The shared store for replicas: PostgreSQL through a `pg` Pool. Migrations run under an
 * advisory lock so replicas starting together migrate once. Every read-decide-write is one
 * statement (INSERT … ON CONFLICT … WHERE, which re-checks the condition on the locked,
 * latest row) or a transaction serialised by an advisory lock, so it is atomic across
 * processes at READ COMMITTED.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../core/log.js';
import { bannerStatusSql } from './banner-status.js';
import { StoreError } from './errors.js';
import { classifyStoreFault, classifyStoreFaults } from './faults.js';
import { LATEST_VERSION, MIGRATIONS } from './migrations.js';
import type {
  ApprovalAnswer,
  BannerRecord,
  BannerStatus,
  ClaimCompletion,
  ContactRecord,
  DeliveryRecord,
  DeliveryStatusChange,
  HeldReceipt,
  HeldReceiptBounds,
  HeldReceiptSettlement,
  HeldReceiptTarget,
  IdempotencyClaim,
  OptOutCheck,
  IdempotencyPhase,
  RateBucket,
  RateDecision,
  RecordWrite,
  Store,
  TakenReceipt,
} from './types.js';
import {
  DELIVERY_COLUMNS,
  deliveryFromRow,
  deliveryValues,
  HELD_RECEIPT_COLUMNS,
  heldReceiptFingerprint,
  heldReceiptFromRow,
  insertDeliverySql,
  num,
  numOrNull,
  type Row,
} from './rows.js';

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
const KEY_PURGE_INTERVAL_MS = 60_000;
/** Longer than any statement here takes, advisory-lock waits included. */
const QUERY_TIMEOUT_MS = 15_000;
/** Expired rate-limit admissions of idle buckets are deleted at most this often. */
const RATE_PURGE_INTERVAL_MS = 60_000;
const BANNER_COLUMNS = 'id, text, audience, severity, dedupe_key, created_at, expires_at, dismissed_at';
const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The statements of a send, prepared once per connection (named): PostgreSQL then parses
 * and plans each once, not on every send; the claim's CTE cost about as much to plan as to run.
 */
const prepared = (name: string, text: string) => ({ name: `notify-${name}`, text });

const WRITTEN: RecordWrite = Object.freeze({ kind: 'written' });
const INSERT_DELIVERY = prepared('insert-delivery', insertDeliverySql((i) => `$${i}`));
const N = DELIVERY_COLUMNS.length;
/** Completes the claim ($N+1 key, $N+2 owner, $N+3 result) and, only if it did, inserts the delivery ($1..$N). */
const RECORD_COMPLETING = prepared('record-completing', `WITH done AS (
  UPDATE idempotency_keys SET state = 'done', phase = 'sending', result = $${N + 3}
  WHERE key = $${N + 1} AND owner = $${N + 2} AND state = 'pending' RETURNING 1
)
INSERT INTO deliveries (${DELIVERY_COLUMNS.join(', ')}) SELECT ${DELIVERY_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')} FROM done RETURNING 1`);

/**
 * A select-list item that makes its statement's own (implicit) transaction commit without
 * waiting for the WAL flush: `set_config(…, true)` lasts until that commit only, so the
 * connection goes back to the pool flushing as before. Used by the idempotency claim alone,
 * whose loss in a database crash breaks neither promise:
 * - one key, one send: a claim is visible to other sessions at once, as with a flushed
 *   commit. A crash that loses it also ends every session; its owner is then fenced out
 *   (the `sending` write and the dry run's record each name the owner and find no row, so
 *   it neither sends nor records) and a duplicate claims afresh;
 * - nothing acknowledged is lost: no answer rests on the claim alone. Those writes that do
 *   (`sending`, before any provider call; the record completing a dry run; the stored
 *   result) commit flushed, and a flushed commit flushes all WAL before it, the claim
 *   included: a write that found the claim committed after it.
 */
const ASYNC_COMMIT = `set_config('synchronous_commit', 'off', true) AS async_commit`;

/**
 * Claims key $1 for payload $2 at $3 as owner $6 (ttl $4, stale after $5), unless channel $7
 * has opted out one of recipients $8. The WHERE of ON CONFLICT DO UPDATE is evaluated on the
 * locked latest row version, so of several racing claimers exactly one gets a row back. A
 * taken-over claim keeps its phase (an expired one starts afresh): once a provider call may
 * have started, no taker sends.
 */
const CLAIM = prepared(
  'claim',
  `WITH o AS (SELECT recipient FROM opt_outs WHERE via = $7 AND recipient = ANY($8::text[]) LIMIT 1),
   c AS (
     INSERT INTO idempotency_keys AS k (key, payload_hash, state, result, claimed_at, owner, phase)
     SELECT $1, $2, 'pending', NULL, $3, $6, 'claimed' WHERE NOT EXISTS (SELECT 1 FROM o)
     ON CONFLICT (key) DO UPDATE SET payload_hash = EXCLUDED.payload_hash, state = 'pending', result = NULL,
       claimed_at = EXCLUDED.claimed_at, owner = EXCLUDED.owner,
       phase = CASE WHEN $3 - k.claimed_at >= $4 THEN 'claimed' ELSE k.phase END
     WHERE $3 - k.claimed_at >= $4
        OR (k.state = 'pending' AND k.payload_hash = EXCLUDED.payload_hash AND $3 - k.claimed_at >= $5)
     RETURNING phase)
   SELECT (SELECT phase FROM c) AS phase, (SELECT recipient FROM o) AS opted_out, ${ASYNC_COMMIT}`,
);
const CLAIM_READ = prepared('claim-read', 'SELECT payload_hash, state, phase, result, claimed_at FROM idempotency_keys WHERE key = $1');
const MARK_SENDING = prepared('mark-sending', `UPDATE idempotency_keys SET phase = 'sending' WHERE key = $1 AND owner = $2 AND state = 'pending'`);
const COMPLETE = prepared('complete', `UPDATE idempotency_keys SET state = 'done', result = $3 WHERE key = $1 AND owner = $2 AND state = 'pending'`);
/** Only a pending claim: a finished send's result must stay replayable. */
const RELEASE = prepared('release', `DELETE FROM idempotency_keys WHERE key = $1 AND owner = $2 AND state = 'pending'`);
/**
 * Answer $2 to approval question key $1 at $3, unless an answer younger than the ttl ($4) is
 * there: the WHERE is evaluated on the locked latest row, so of racing answers one writes.
 * Kept with the idempotency keys (and purged with them), under a key no scoped send key can
 * take (those are JSON arrays).
 */
const ANSWER_APPROVAL = prepared(
  'answer-approval',
  `INSERT INTO idempotency_keys AS k (key, payload_hash, state, result, claimed_at, owner, phase) VALUES ($1, $2, 'done', NULL, $3, NULL, 'sending')
   ON CONFLICT (key) DO UPDATE SET payload_hash = EXCLUDED.payload_hash, claimed_at = EXCLUDED.claimed_at WHERE $3 - k.claimed_at >= $4
   RETURNING 1`,
);
const OPTED_OUT = prepared('opted-out', 'SELECT recipient FROM opt_outs WHERE via = $1 AND recipient = ANY($2::text[]) LIMIT 1');

function toBanner(r: Row): BannerRecord {
  return {
    id: r.id as string,
    text: r.text as string,
    audience: r.audience as string,
    severity: r.severity as BannerRecord['severity'],
    dedupe_key: (r.dedupe_key as string | null) ?? null,
    created_at: num(r.created_at),
    expires_at: numOrNull(r.expires_at),
    dismissed_at: numOrNull(r.dismissed_at),
  };
}

const toDelivery = (r: Row): DeliveryRecord => deliveryFromRow(r, (v) => v);

/**
 * Runs `fn` on a client of its own. pg-pool stops listening for a client's errors while it
 * is checked out, so a connection reset then would be an unhandled 'error' event that ends
 * the process: while held, an error is recorded and fails `fn`'s query instead, and the
 * broken client is discarded rather than returned to the pool.
 */
async function withClient<T>(pool: pg.Pool, log: Logger, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
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
        log.info('store migrated', { store: 'postgres', version: m.version, migration: m.name });
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  });
}

export class PostgresStore implements Store {
  readonly kind = 'postgres';
  private lastKeyPurge = 0;
  private lastRatePurge = 0;

  private constructor(
    readonly pool: pg.Pool,
    private readonly log: Logger,
  ) {}

  static async open(opts: PostgresStoreOptions): Promise<PostgresStore> {
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
    opts.log.debug('store opened', { store: 'postgres', schema: opts.schema ?? null });
    return new PostgresStore(pool, opts.log);
  }

  async writeRecord(r: DeliveryRecord, opts: { optOut?: OptOutCheck; claim?: ClaimCompletion } = {}): Promise<RecordWrite> {
    const { optOut, claim } = opts;
    if (optOut) {
      const optedOut = await this.findOptedOut(optOut);
      if (optedOut !== undefined) return { kind: 'opted_out', recipient: optedOut };
    }
    if (!claim) {
      await this.pool.query({ ...INSERT_DELIVERY, values: deliveryValues(r) });
      return WRITTEN;
    }
    // One statement: both writes commit together, and the insert happens only if the claim was still ours.
    const values = [...deliveryValues(r), claim.key, claim.owner, JSON.stringify(claim.result ?? null)];
    const { rows } = await this.pool.query({ ...RECORD_COMPLETING, values });
    return rows.length === 1 ? WRITTEN : { kind: 'claim_lost' };
  }

  async listDeliveries(limit: number): Promise<DeliveryRecord[]> {
    const { rows } = await this.pool.query('SELECT * FROM deliveries ORDER BY created_at DESC, seq DESC LIMIT $1', [
      Math.max(0, Math.trunc(limit)),
    ]);
    return rows.map(toDelivery);
  }

  async getDelivery(id: string): Promise<DeliveryRecord | null> {
    const { rows } = await this.pool.query('SELECT * FROM deliveries WHERE id = $1', [id]);
    return rows[0] ? toDelivery(rows[0]) : null;
  }

  async findDeliveryByProviderMessage(via: string, providerMessageId: string): Promise<DeliveryRecord | null> {
    const { rows } = await this.pool.query('SELECT * FROM deliveries WHERE via = $1 AND provider_message_id = $2 ORDER BY seq LIMIT 1', [
      via,
      providerMessageId,
    ]);
    return rows[0] ? toDelivery(rows[0]) : null;
  }

  async updateDeliveryStatus(id: string, c: DeliveryStatusChange): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      'UPDATE deliveries SET status = $1, provider_status = $2, provider_status_code = $3, status_updated_at = $4, provider_message_id = COALESCE(provider_message_id, $7) WHERE id = $5 AND status = $6',
      [c.status, c.provider_status, c.provider_status_code, c.at, id, c.from, c.provider_message_id ?? null],
    );
    return rowCount === 1;
  }

  async holdReceipt(r: HeldReceipt, { now, maxAgeMs, maxRows, maxPerMessage }: HeldReceiptBounds): Promise<number | null> {
    // One statement. The purge and the counts see the same snapshot, so the counts skip the
    // rows being purged. At READ COMMITTED replicas holding at the same instant may pass the
    // caps by as many rows as there are of them: a bound, not an exact limit. The same
    // receipt held at the same instant by two replicas is one row (the unique fingerprint).
    const { rows } = await this.pool.query(
      `WITH purged AS (DELETE FROM held_receipts WHERE received_at <= $8),
       same AS (SELECT seq FROM held_receipts WHERE fingerprint = $11 AND received_at > $8),
       added AS (
         INSERT INTO held_receipts (via, provider_message_id, notification_id, event, provider_status, provider_status_code, received_at, fingerprint)
         SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint, $11::text
         WHERE NOT EXISTS (SELECT 1 FROM same)
           AND (SELECT count(*) FROM held_receipts WHERE received_at > $8) < $9
           AND (SELECT count(*) FROM held_receipts WHERE via = $1 AND provider_message_id = $2 AND received_at > $8) < $10
         ON CONFLICT (fingerprint) DO NOTHING
         RETURNING seq)
       SELECT seq FROM added UNION ALL SELECT seq FROM same`,
      [
        r.via,
        r.provider_message_id,
        r.notification_id,
        r.event,
        r.provider_status,
        r.provider_status_code,
        r.received_at,
        now - maxAgeMs,
        maxRows,
        maxPerMessage,
        heldReceiptFingerprint(r),
      ],
    );
    if (rows[0]) return num((rows[0] as Row).seq);
    // Another replica held the same receipt at the same instant (the insert met its row).
    const { rows: raced } = await this.pool.query('SELECT seq FROM held_receipts WHERE fingerprint = $1', [heldReceiptFingerprint(r)]);
    return raced[0] ? num((raced[0] as Row).seq) : null;
  }

  async settleHeldReceipts<T>(
    target: HeldReceiptTarget,
    fold: (delivery: DeliveryRecord, held: readonly TakenReceipt[]) => HeldReceiptSettlement<T>,
  ): Promise<T | undefined> {
    const match = 'via = $1 AND (provider_message_id = $2 OR notification_id = $3)';
    const args = [target.via, target.provider_message_id, target.id];
    // Most records have nothing held: one round trip says so. A receipt held after this look
    // finds the record itself (it looks again once it is held).
    const { rows: any } = await this.pool.query(`SELECT 1 FROM held_receipts WHERE ${match} LIMIT 1`, args);
    if (any.length === 0) return undefined;
    return withClient(this.pool, this.log, async (client) => {
      try {
        await client.query('BEGIN');
        // Locked until COMMIT: a racing taker waits, then finds them gone.
        const { rows } = await client.query(`SELECT ${HELD_RECEIPT_COLUMNS} FROM held_receipts WHERE ${match} ORDER BY seq FOR UPDATE`, args);
        const { rows: found } = rows.length === 0 ? { rows: [] } : await client.query('SELECT * FROM deliveries WHERE id = $1 FOR UPDATE', [target.id]);
        if (rows.length === 0 || !found[0]) {
          await client.query('COMMIT');
          return undefined;
        }
        const held = (rows as Row[]).map(heldReceiptFromRow);
        const { change, result } = fold(toDelivery(found[0] as Row), held);
        if (change) {
          await client.query(
            'UPDATE deliveries SET status = $1, provider_status = $2, provider_status_code = $3, status_updated_at = $4, provider_message_id = COALESCE(provider_message_id, $7) WHERE id = $5 AND status = $6',
            [change.status, change.provider_status, change.provider_status_code, change.at, target.id, change.from, change.provider_message_id ?? null],
          );
        }
        await client.query('DELETE FROM held_receipts WHERE seq = ANY($1::bigint[])', [held.map((h) => h.seq)]);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  async claimIdempotency(
    key: string,
    payloadHash: string,
    now: number,
    opts: { ttlMs: number; staleAfterMs: number; optOut?: OptOutCheck },
  ): Promise<IdempotencyClaim> {
    if (now - this.lastKeyPurge >= KEY_PURGE_INTERVAL_MS) {
      this.lastKeyPurge = now;
      await this.pool.query('DELETE FROM idempotency_keys WHERE claimed_at <= $1', [now - opts.ttlMs]);
    }
    const owner = randomUUID();
    // A row that vanishes between the upsert and the read was released: claim again.
    for (let attempt = 0; attempt < 5; attempt++) {
      // The opt-out lookup rides along: an opted-out recipient claims nothing. One statement,
      // one round trip, committed without waiting for its WAL flush (see ASYNC_COMMIT).
      const { via = null, recipients = [] } = opts.optOut ?? {};
      const claimed = await this.pool.query({ ...CLAIM, values: [key, payloadHash, now, opts.ttlMs, opts.staleAfterMs, owner, via, recipients] });
      const won = claimed.rows[0] as Row;
      if (typeof won.opted_out === 'string') return { kind: 'opted_out', recipient: won.opted_out };
      if (won.phase !== null) return { kind: 'claimed', owner, phase: won.phase as IdempotencyPhase };
      const { rows } = await this.pool.query({ ...CLAIM_READ, values: [key] });
      const row = rows[0] as Row | undefined;
      if (!row) continue;
      const base = { kind: 'existing' as const, payload_hash: row.payload_hash as string, claimed_at: num(row.claimed_at) };
      return row.state === 'pending'
        ? { ...base, state: 'pending', phase: row.phase as IdempotencyPhase }
        : { ...base, state: 'done', result: row.result ?? null };
    }
    throw new StoreError(`idempotency key "${key}" kept changing while being claimed`);
  }

  // Fenced: each write names the owner, so one that lost its claim changes nothing.
  async markIdempotencySending(key: string, owner: string): Promise<boolean> {
    const { rowCount } = await this.pool.query({ ...MARK_SENDING, values: [key, owner] });
    return rowCount === 1;
  }

  async completeIdempotency(key: string, owner: string, result: unknown): Promise<boolean> {
    const { rowCount } = await this.pool.query({ ...COMPLETE, values: [key, owner, JSON.stringify(result ?? null)] });
    return rowCount === 1;
  }

  async releaseIdempotency(key: string, owner: string): Promise<boolean> {
    const { rowCount } = await this.pool.query({ ...RELEASE, values: [key, owner] });
    return rowCount === 1;
  }

  async admitRate(buckets: readonly RateBucket[], now: number): Promise<RateDecision> {
    if (now - this.lastRatePurge >= RATE_PURGE_INTERVAL_MS) {
      // Buckets of clients that stopped calling; active buckets are trimmed below.
      this.lastRatePurge = now;
      await this.pool.query('DELETE FROM rate_admissions WHERE expires_at <= $1', [now]);
    }
    const keys = buckets.map((b) => b.key);
    return withClient(this.pool, this.log, async (client) => {
      try {
        await client.query('BEGIN');
        // Count-then-insert is serialised per bucket across replicas; released at COMMIT.
        // Locks are taken in one order, so two checks sharing buckets cannot deadlock.
        for (const key of [...new Set(keys)].sort()) {
          await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('notify-mcp:rate:' || $1, 0))`, [key]);
        }
        // Per bucket, the limit-th newest admission still in the window: present means full, until it expires.
        const { rows } = await client.query(
          `SELECT (SELECT a.expires_at FROM rate_admissions a WHERE a.bucket = b.key AND a.expires_at > $3
                   ORDER BY a.expires_at DESC LIMIT 1 OFFSET GREATEST(b.lim - 1, 0)) AS full_until
           FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS b(key, lim, i) ORDER BY b.i`,
          [keys, buckets.map((b) => b.limit), now],
        );
        const waitMs = buckets.map((b, i) => {
          if (b.limit <= 0) return b.windowMs;
          const fullUntil = (rows[i] as Row | undefined)?.full_until;
          return fullUntil === null || fullUntil === undefined ? null : num(fullUntil) - now;
        });
        if (waitMs.some((w) => w !== null)) {
          await client.query('COMMIT');
          return { admitted: false, waitMs };
        }
        await client.query('DELETE FROM rate_admissions WHERE bucket = ANY($1::text[]) AND expires_at <= $2', [keys, now]);
        await client.query(
          'INSERT INTO rate_admissions (bucket, expires_at) SELECT key, $2::bigint + window_ms FROM unnest($1::text[], $3::bigint[]) AS b(key, window_ms)',
          [keys, now, buckets.map((b) => b.windowMs)],
        );
        await client.query('COMMIT');
        return { admitted: true };
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
    });
  }

  async findOptedOut({ via, recipients }: OptOutCheck): Promise<string | undefined> {
    const { rows } = await this.pool.query({ ...OPTED_OUT, values: [via, recipients] });
    const recipient = (rows[0] as Row | undefined)?.recipient;
    return typeof recipient === 'string' ? recipient : undefined;
  }

  async addOptOut(via: string, recipient: string, now: number): Promise<void> {
    await this.pool.query('INSERT INTO opt_outs (via, recipient, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      via,
      recipient,
      now,
    ]);
  }

  async answerApproval(id: string, answer: ApprovalAnswer, now: number, ttlMs: number): Promise<{ answer: ApprovalAnswer; first: boolean }> {
    const key = `approval-answer:${id}`;
    // A row that vanishes between the upsert and the read was purged: answer again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const { rowCount } = await this.pool.query({ ...ANSWER_APPROVAL, values: [key, answer, now, ttlMs] });
      if (rowCount === 1) return { answer, first: true };
      const { rows } = await this.pool.query({ ...CLAIM_READ, values: [key] });
      const row = rows[0] as Row | undefined;
      if (row) return { answer: row.payload_hash as ApprovalAnswer, first: false };
    }
    throw new StoreError(`approval answer "${id}" kept changing while being recorded`);
  }

  async knownContacts(via: string, recipients: readonly string[]): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ recipient: string }>('SELECT recipient FROM contacts WHERE via = $1 AND recipient = ANY($2::text[])', [
      via,
      [...recipients],
    ]);
    return new Set(rows.map((r) => r.recipient));
  }

  async addContacts(via: string, recipients: readonly string[], now: number, client: string | null): Promise<void> {
    await this.pool.query(
      'INSERT INTO contacts (via, recipient, approved_at, client) SELECT $1, r, $3, $4 FROM unnest($2::text[]) AS r ON CONFLICT DO NOTHING',
      [via, [...recipients], now, client],
    );
  }

  async listContacts(): Promise<ContactRecord[]> {
    const { rows } = await this.pool.query('SELECT via, recipient, approved_at, client FROM contacts ORDER BY via, recipient');
    return rows.map((r) => ({ via: r.via as string, recipient: r.recipient as string, approved_at: num(r.approved_at), client: (r.client as string | null) ?? null }));
  }

  async forgetContact(via: string, recipient: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM contacts WHERE via = $1 AND recipient = $2', [via, recipient]);
    return (rowCount ?? 0) > 0;
  }

  async insertBanner(b: BannerRecord): Promise<BannerRecord> {
    const insert = (q: pg.Pool | pg.PoolClient) =>
      q.query(`INSERT INTO banners (${BANNER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
        b.id,
        b.text,
        b.audience,
        b.severity,
        b.dedupe_key,
        b.created_at,
        b.expires_at,
        b.dismissed_at,
      ]);
    const dedupeKey = b.dedupe_key;
    if (dedupeKey === null) {
      await insert(this.pool);
      return { ...b };
    }
    return withClient(this.pool, this.log, async (client) => {
      try {
        await client.query('BEGIN');
        // Serialises writers of this audience's dedupe key only; released at COMMIT/ROLLBACK.
        await client.query(`SELECT pg_advisory_xact_lock(hashtext(json_build_array('notify-mcp:banner-dedupe', $1::text, $2::text)::text))`, [
          b.audience,
          dedupeKey,
        ]);
        const existing = await this.activeByDedupe(client, b.audience, dedupeKey, b.created_at);
        if (existing) {
          await client.query('COMMIT');
          return existing;
        }
        await insert(client);
        await client.query('COMMIT');
        return { ...b };
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
    });
  }

  async purgeBanners(before: number): Promise<number> {
    const { rowCount } = await this.pool.query('DELETE FROM banners WHERE dismissed_at < $1 OR expires_at < $1', [before]);
    return rowCount ?? 0;
  }

  async getBanner(id: string): Promise<BannerRecord | null> {
    const { rows } = await this.pool.query(`SELECT ${BANNER_COLUMNS} FROM banners WHERE id = $1`, [id]);
    return rows[0] ? toBanner(rows[0] as Row) : null;
  }

  async findActiveBannerByDedupe(audience: string, dedupeKey: string, now: number): Promise<BannerRecord | null> {
    return this.activeByDedupe(this.pool, audience, dedupeKey, now);
  }

  private async activeByDedupe(q: pg.Pool | pg.PoolClient, audience: string, dedupeKey: string, now: number): Promise<BannerRecord | null> {
    const { rows } = await q.query(
      `SELECT ${BANNER_COLUMNS} FROM banners WHERE audience = $1 AND dedupe_key = $2 AND ${bannerStatusSql('active', '$3')}
       ORDER BY created_at DESC, seq DESC LIMIT 1`,
      [audience, dedupeKey, now],
    );
    return rows[0] ? toBanner(rows[0] as Row) : null;
  }

  async dismissBanner(id: string, now: number): Promise<BannerRecord | null> {
    await this.pool.query('UPDATE banners SET dismissed_at = $2 WHERE id = $1 AND dismissed_at IS NULL', [id, now]);
    return this.getBanner(id);
  }

  async endBanner(id: string, now: number): Promise<{ banner: BannerRecord; dismissed: boolean } | null> {
    const claimed = await this.pool.query(`UPDATE banners SET dismissed_at = $2 WHERE id = $1 AND ${bannerStatusSql('active', '$2')}`, [id, now]);
    // Read after the claim: what stops a banner being active (dismissal, expiry) is final.
    const banner = await this.getBanner(id);
    return banner ? { banner, dismissed: (claimed.rowCount ?? 0) > 0 } : null;
  }

  async listBanners(query: { audiences?: string[]; status?: BannerStatus; now: number; limit?: number }): Promise<BannerRecord[]> {
    const params: unknown[] = [query.now, query.limit ?? null];
    const status = query.status !== undefined ? `AND ${bannerStatusSql(query.status, '$1')}` : '';
    let sql: string;
    if (query.audiences !== undefined) {
      // One index walk per audience, each stopping after `limit` rows (LATERAL … LIMIT), then
      // a sort of at most audiences × limit rows: `audience = ANY(…) ORDER BY` would read and
      // sort every matching row. Each banner has one audience, so the walks are disjoint.
      params.push([...new Set(query.audiences)]);
      sql = `SELECT ${BANNER_COLUMNS.split(', ').map((c) => `b.${c}`).join(', ')} FROM unnest($3::text[]) AS a(name)
             CROSS JOIN LATERAL (
               SELECT seq, ${BANNER_COLUMNS} FROM banners
               WHERE audience = a.name AND $1::bigint IS NOT NULL ${status}
               ORDER BY created_at DESC, seq DESC LIMIT $2
             ) AS b
             ORDER BY created_at DESC, seq DESC LIMIT $2`;
    } else {
      // $1 is referenced even without a status filter, so its type is always known.
      sql = `SELECT ${BANNER_COLUMNS} FROM banners WHERE $1::bigint IS NOT NULL ${status}
             ORDER BY created_at DESC, seq DESC LIMIT $2`;
    }
    const { rows } = await this.pool.query(sql, params);
    return rows.map((r) => toBanner(r as Row));
  }

  async bannersVersion(): Promise<string> {
    const { rows } = await this.pool.query({ name: 'notify-banners-version', text: 'SELECT epoch, n FROM banners_version WHERE id = 1' });
    const row = rows[0] as Row | undefined;
    if (!row) throw new StoreError('banners_version has no row; the database was altered by hand');
    return `${String(row.epoch)}:${String(row.n)}`;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** The store, its transient faults (connection lost or refused, server shutting down) thrown as StoreUnavailableError. */
export async function openPostgresStore(opts: PostgresStoreOptions): Promise<PostgresStore> {
  return classifyStoreFaults(await PostgresStore.open(opts));
}
