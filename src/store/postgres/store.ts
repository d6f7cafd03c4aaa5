/**
 * The shared store for replicas: PostgreSQL through a `pg` Pool. Migrations run under an
 * advisory lock so replicas starting together migrate once. Every read-decide-write is one
 * statement (INSERT … ON CONFLICT … WHERE, which re-checks the condition on the locked,
 * latest row) or a transaction serialised by an advisory lock, so it is atomic across
 * processes at READ COMMITTED.
 * What both engines do alike is in ../sql/ (docs/architecture.md, "The store"); this folder
 * holds what differs; ./connection.ts opens the pool.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../../core/log.js';
import { bannerStatusSql } from '../banner-status.js';
import { StoreError } from '../errors.js';
import { classifyingFaults } from '../faults.js';
import { storeThrough } from '../wrap.js';
import { auditEntriesFor, chain, released, type AuditedChange } from '../audit.js';
import {
  appendAuditText,
  AUDIT_COLUMNS,
  AUDIT_HASH_AT,
  AUDIT_LINES_POSTGRES,
  auditLinesFromRow,
  AUDIT_PRUNE,
  AUDIT_PRUNE_UPTO,
  auditHeadFromRow,
  auditValues,
  MOVE_AUDIT_ANCHOR,
} from '../sql/audit.js';
import type {
  ApprovalAnswer,
  AuditContext,
  AuditLines,
  DeliveryDecision,
  DeliveryStatusChange,
  OutboxEntry,
  BannerRecord,
  CapCharge,
  CapDecision,
  DueClaim,
  DueClaimOptions,
  BannerStatus,
  ClaimCompletion,
  DeliveryRecord,
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
  ReleaseRecord,
  Store,
  TakenReceipt,
} from '../types.js';
import { statement, type Dialect, type Statement } from '../sql/dialect.js';
import {
  bannerFromRow,
  DELIVERY_COLUMNS,
  deliveryValues,
  HELD_RECEIPT_COLUMNS,
  heldReceiptFingerprint,
  heldReceiptFromRow,
  num,
  type Row,
} from '../sql/rows.js';
import { bannerValues, decisionValues, SqlStore, statusChangeValues } from '../sql/shared.js';
import { outboxFromRow, outboxStatements, outboxValues } from '../sql/outbox.js';
import { ENQUEUE_APPROVED } from '../sql/approval-writes.js';
import * as q from '../sql/statements.js';
import { connectPool, postgresDialect, withClient, type PostgresStoreOptions } from './connection.js';

const KEY_PURGE_INTERVAL_MS = 60_000;
/** Expired rate-limit admissions of idle buckets are deleted at most this often. */
const RATE_PURGE_INTERVAL_MS = 60_000;
const { BANNER_COLUMNS } = q;

/**
 * Statements are prepared once per connection (named): PostgreSQL then parses and plans
 * each once, not on every call; the claim's CTE costs about as much to plan as to run.
 */
const prepared = statement;

const WRITTEN: RecordWrite = Object.freeze({ kind: 'written' });
const N = DELIVERY_COLUMNS.length;
/** Completes the claim ($N+1 key, $N+2 owner, $N+3 result) and, only if it did, inserts the delivery ($1..$N). */
const RECORD_COMPLETING = prepared(
  'record-completing',
  `WITH done AS (
  UPDATE idempotency_keys SET state = 'done', phase = 'sending', result = $${N + 3}
  WHERE key = $${N + 1} AND owner = $${N + 2} AND state = 'pending' RETURNING 1
)
INSERT INTO deliveries (${DELIVERY_COLUMNS.join(', ')}) SELECT ${DELIVERY_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')} FROM done RETURNING 1`,
);

/**
 * A select-list item that makes its statement's own (implicit) transaction commit without
 * waiting for the WAL flush: `set_config(…, true)` lasts until that commit only, so the
 * connection goes back to the pool flushing its commits. Used by the idempotency claim alone,
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
 * Claims key $1 for payload $2 at $3 as owner $6 (ttl $4, stale after $5) for notification
 * $9, unless channel $7 has opted out one of recipients $8. The WHERE of ON CONFLICT DO UPDATE is evaluated on the
 * locked latest row version, so of several racing claimers exactly one gets a row back. A
 * taken-over claim keeps its phase (an expired one starts afresh): once a provider call may
 * have started, no taker sends, and the row keeps the id that call was sending under.
 */
const CLAIM = prepared(
  'claim',
  `WITH o AS (SELECT recipient FROM opt_outs WHERE via = $7 AND recipient = ANY($8::text[]) LIMIT 1),
   c AS (
     INSERT INTO idempotency_keys AS k (key, payload_hash, state, result, claimed_at, owner, phase, notification_id)
     SELECT $1, $2, 'pending', NULL, $3, $6, 'claimed', $9::text WHERE NOT EXISTS (SELECT 1 FROM o)
     ON CONFLICT (key) DO UPDATE SET payload_hash = EXCLUDED.payload_hash, state = 'pending', result = NULL,
       claimed_at = EXCLUDED.claimed_at, owner = EXCLUDED.owner,
       phase = CASE WHEN $3 - k.claimed_at >= $4 THEN 'claimed' ELSE k.phase END,
       notification_id = CASE WHEN $3 - k.claimed_at >= $4 OR k.phase = 'claimed' THEN EXCLUDED.notification_id ELSE k.notification_id END
     WHERE $3 - k.claimed_at >= $4
        OR (k.state = 'pending' AND k.payload_hash = EXCLUDED.payload_hash AND $3 - k.claimed_at >= $5)
     RETURNING phase, notification_id)
   SELECT (SELECT phase FROM c) AS phase, (SELECT notification_id FROM c) AS notification_id, (SELECT recipient FROM o) AS opted_out, ${ASYNC_COMMIT}`,
);
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
/**
 * The chain's head, locked until COMMIT: appenders on every replica queue on this one row, so
 * each reads the head the previous one wrote and the chain never forks. A row lock rather than
 * an advisory lock because the lock and the state it guards are the same row (no separate
 * read of the tail, nothing to get out of step), it is released by COMMIT or ROLLBACK like
 * the write it guards, and it works through a transaction-pooling proxy.
 */
const LOCK_AUDIT_HEAD = prepared('audit-lock-head', 'SELECT seq, hash, anchor_seq, anchor_hash FROM audit_head WHERE id = 1 FOR UPDATE');
/** `n` entries appended and the head moved, in one statement. */
const appendAudit = new Map<number, { name: string; text: string }>();
function appendAuditStatement(n: number): { name: string; text: string } {
  let s = appendAudit.get(n);
  if (!s) {
    const w = AUDIT_COLUMNS.length;
    s = prepared(
      `audit-append-${n}`,
      `WITH added AS (${appendAuditText(n)}) UPDATE audit_head SET seq = $${n * w + 1}, hash = $${n * w + 2} WHERE id = 1`,
    );
    appendAudit.set(n, s);
  }
  return s;
}

/**
 * Claims what is due at $1 (a release claimed before $2 was left by a dead process) for owner
 * $4, at most $3 (CLAIM_DUE_ID: only entry $3); due longer than $5 ago (never claimed) expires
 * instead. SKIP LOCKED lets replicas claim disjoint batches at once, each row to one of them;
 * `prior` is the state before the claim, read under the same lock. Without an id, one index
 * walk per state: one scan with an OR read and sorted every due row for each batch.
 */
const walk = (state: string, cond: string) =>
  `(SELECT id, state AS prior, due_at FROM outbox WHERE state = '${state}' AND ${cond} ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED)`;
const claimDue = (name: string, pick: string) =>
  prepared(
    name,
    `WITH ${pick}
     UPDATE outbox o SET
       state = CASE WHEN picked.prior <> 'releasing' AND o.due_at < $1 - $5 THEN 'expired' ELSE 'releasing' END,
       owner = CASE WHEN picked.prior <> 'releasing' AND o.due_at < $1 - $5 THEN NULL ELSE $4 END,
       claimed_at = CASE WHEN picked.prior <> 'releasing' AND o.due_at < $1 - $5 THEN o.claimed_at ELSE $1 END,
       finished_at = CASE WHEN picked.prior <> 'releasing' AND o.due_at < $1 - $5 THEN $1 ELSE NULL END
     FROM picked WHERE o.id = picked.id RETURNING o.*, picked.prior`,
  );
/** $1 now, $2 the lease's start, $3 the batch size, $4 the owner, $5 the grace. */
const CLAIM_DUE = claimDue(
  'claim-due',
  `s AS ${walk('scheduled', 'due_at <= $1')}, h AS ${walk('held', 'due_at <= $1')}, r AS ${walk('releasing', 'claimed_at <= $2')},
   picked AS (SELECT * FROM s UNION ALL SELECT * FROM h UNION ALL SELECT * FROM r ORDER BY due_at LIMIT $3)`,
);
/** As CLAIM_DUE, for one id ($3). */
const CLAIM_DUE_ID = claimDue(
  'claim-due-id',
  `picked AS (
     SELECT id, state AS prior FROM outbox
     WHERE ((state IN ('scheduled', 'held') AND due_at <= $1) OR (state = 'releasing' AND claimed_at <= $2)) AND id = $3
     FOR UPDATE SKIP LOCKED)`,
);

const OPTED_OUT = prepared('opted-out', 'SELECT recipient FROM opt_outs WHERE via = $1 AND recipient = ANY($2::text[]) LIMIT 1');

/** The store as opened: the contract, and the pool for tests and tools. */
export type PostgresStore = Store & { readonly pool: pg.Pool };

class PostgresEngine extends SqlStore implements Store {
  // `-` takes a key out of an object only: a JSON null (a record without approval) stays as it is.
  protected readonly listings = q.findListings('postgres', {
    payload: 'payload::text',
    withoutCall: "CASE WHEN json_typeof(approval) = 'object' THEN (approval::jsonb - 'call')::json ELSE approval END",
  });

  readonly kind = 'postgres';
  private lastKeyPurge = 0;
  private lastRatePurge = 0;

  private constructor(
    readonly pool: pg.Pool,
    private readonly log: Logger,
  ) {
    super(
      postgresDialect(pool),
      outboxStatements('postgres', (p) => `SELECT json_array_elements_text(${p}::json)`),
    );
  }

  static async open(opts: PostgresStoreOptions): Promise<PostgresEngine> {
    const pool = await connectPool(opts);
    opts.log.debug('store opened', { store: 'postgres', schema: opts.schema ?? null });
    return new PostgresEngine(pool, opts.log);
  }

  /** Runs `fn` in one transaction on one connection: committed when it returns, rolled back when it throws. */
  private transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return withClient(this.pool, this.log, async (client) => {
      await client.query('BEGIN');
      try {
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  /**
   * Appends audit entries to the chain, inside the transaction (on `client`) of the write
   * they describe. Call it after that write's own statements: the head stays locked from
   * here to COMMIT, so the later it is taken the less replicas queue on it.
   */
  protected async appendAudit(client: pg.PoolClient, changes: readonly AuditedChange[]): Promise<void> {
    if (changes.length === 0) return;
    const inputs = changes.flatMap(auditEntriesFor);
    const { rows } = await client.query({ ...LOCK_AUDIT_HEAD, values: [] });
    const { entries, head } = chain(auditHeadFromRow(rows[0] as Row), inputs);
    await client.query({ ...appendAuditStatement(entries.length), values: [...entries.flatMap(auditValues), head.seq, head.hash] });
  }

  protected async audited(s: Statement, params: readonly unknown[], changes: (rows: Row[]) => AuditedChange[]): Promise<Row[]> {
    return this.transaction(async (client) => {
      const { rows } = await client.query({ ...s, values: params as unknown[] });
      await this.appendAudit(client, changes(rows as Row[]));
      return rows as Row[];
    });
  }

  async writeRecord(
    r: DeliveryRecord,
    opts: { optOut?: OptOutCheck; claim?: ClaimCompletion; audit?: AuditContext } = {},
  ): Promise<RecordWrite> {
    const { optOut, claim } = opts;
    if (optOut) {
      const optedOut = await this.findOptedOut(optOut);
      if (optedOut !== undefined) return { kind: 'opted_out', recipient: optedOut };
    }
    const LOST: RecordWrite = { kind: 'claim_lost' };
    const written = await this.transaction(async (client): Promise<RecordWrite> => {
      if (!claim) {
        await client.query({ ...q.INSERT_DELIVERY, values: deliveryValues(r) });
      } else {
        // Both writes commit together, and the insert happens only if the claim was still ours.
        const values = [...deliveryValues(r), claim.key, claim.owner, JSON.stringify(claim.result ?? null)];
        const { rows } = await client.query({ ...RECORD_COMPLETING, values });
        if (rows.length !== 1) throw LOST;
      }
      await this.appendAudit(client, [{ write: 'record', record: r, ctx: opts.audit }]);
      return WRITTEN;
    }).catch((err: unknown) => {
      if (err === LOST) return LOST;
      throw err;
    });
    return written;
  }

  async approveDelivery(id: string, d: DeliveryDecision, release: OutboxEntry): Promise<boolean> {
    const LOST = Symbol('lost');
    return this.transaction(async (client) => {
      const { rowCount } = await client.query({ ...q.DECIDE_DELIVERY, values: decisionValues(id, d) });
      if (rowCount !== 1) throw LOST;
      const enqueued = await client.query({ ...ENQUEUE_APPROVED, values: outboxValues(release) });
      if (enqueued.rowCount !== 1) throw new StoreError(`outbox entry ${id} is waiting or under way already; the approval was not written`);
      await this.appendAudit(client, [
        { write: 'decision', id, decision: d },
        { write: 'schedule', entry: release },
      ]);
      return true;
    }).catch((err: unknown) => {
      if (err === LOST) return false;
      throw err;
    });
  }

  override async updateDeliveryStatus(id: string, change: DeliveryStatusChange): Promise<boolean> {
    const NOT_MOVED = Symbol('not moved');
    return this.transaction(async (client) => {
      const { rowCount } = await client.query({ ...q.UPDATE_DELIVERY_STATUS, values: statusChangeValues(id, change) });
      if (rowCount !== 1) throw NOT_MOVED;
      await this.appendAudit(client, [{ write: 'receipt', id, change }]);
      return true;
    }).catch((err: unknown) => {
      if (err === NOT_MOVED) return false;
      throw err;
    });
  }

  async auditLines(afterSeq: number, limit: number): Promise<AuditLines> {
    const { rows } = await this.pool.query({ ...AUDIT_LINES_POSTGRES, values: [afterSeq, limit] });
    return auditLinesFromRow(rows[0] as Row | undefined);
  }

  async pruneAudit(before: number, now: number): Promise<number> {
    return this.transaction(async (client) => {
      // The head's lock: no append or other prune moves the chain meanwhile.
      const { rows } = await client.query({ ...LOCK_AUDIT_HEAD, values: [] });
      const head = auditHeadFromRow(rows[0] as Row);
      const upto = (await client.query({ ...AUDIT_PRUNE_UPTO, values: [before] })).rows[0]?.upto;
      if (upto === null || upto === undefined || num(upto) <= head.anchor_seq) return 0;
      const anchor = (await client.query({ ...AUDIT_HASH_AT, values: [upto] })).rows[0].hash as string;
      const { rowCount } = await client.query({ ...AUDIT_PRUNE, values: [upto] });
      await client.query({ ...MOVE_AUDIT_ANCHOR, values: [upto, anchor] });
      await this.appendAudit(client, [{ write: 'prune', anchor_seq: num(upto), anchor_hash: anchor, at: now }]);
      return rowCount ?? 0;
    });
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
        const { rows } = await client.query(
          `SELECT ${HELD_RECEIPT_COLUMNS} FROM held_receipts WHERE ${match} ORDER BY seq FOR UPDATE`,
          args,
        );
        const { rows: found } =
          rows.length === 0 ? { rows: [] } : await client.query('SELECT * FROM deliveries WHERE id = $1 FOR UPDATE', [target.id]);
        if (rows.length === 0 || !found[0]) {
          await client.query('COMMIT');
          return undefined;
        }
        const held = (rows as Row[]).map(heldReceiptFromRow);
        const { change, result } = fold(this.toDelivery(found[0] as Row), held);
        if (change && (await client.query({ ...q.UPDATE_DELIVERY_STATUS, values: statusChangeValues(target.id, change) })).rowCount === 1) {
          await this.appendAudit(client, [{ write: 'receipt', id: target.id, change }]);
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
    opts: { ttlMs: number; staleAfterMs: number; optOut?: OptOutCheck; notificationId?: string },
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
      const claimed = await this.pool.query({
        ...CLAIM,
        values: [key, payloadHash, now, opts.ttlMs, opts.staleAfterMs, owner, via, recipients, opts.notificationId ?? null],
      });
      const won = claimed.rows[0] as Row;
      if (typeof won.opted_out === 'string') return { kind: 'opted_out', recipient: won.opted_out };
      if (won.phase !== null) {
        const phase = won.phase as IdempotencyPhase;
        return typeof won.notification_id === 'string'
          ? { kind: 'claimed', owner, phase, notification_id: won.notification_id }
          : { kind: 'claimed', owner, phase };
      }
      const { rows } = await this.pool.query({ ...q.CLAIM_READ, values: [key] });
      const row = rows[0] as Row | undefined;
      if (!row) continue;
      const base = { kind: 'existing' as const, payload_hash: row.payload_hash as string, claimed_at: num(row.claimed_at) };
      return row.state === 'pending'
        ? { ...base, state: 'pending', phase: row.phase as IdempotencyPhase }
        : { ...base, state: 'done', result: row.result ?? null };
    }
    throw new StoreError(`idempotency key "${key}" kept changing while being claimed`);
  }

  async claimDue(now: number, { limit, owner, leaseMs, graceMs, id }: DueClaimOptions): Promise<DueClaim> {
    // One transaction with its audit entries: the claim's row locks and the chain's head are released by its COMMIT.
    const rows = await this.audited(
      id === undefined ? CLAIM_DUE : CLAIM_DUE_ID,
      [now, now - leaseMs, id ?? limit, owner, graceMs],
      // RETURNING keeps no order: the chain names them oldest due first, as the claim took them.
      (claimed) =>
        [...claimed]
          .sort((x, y) => num(x.due_at) - num(y.due_at) || String(x.id).localeCompare(String(y.id)))
          .map((row): AuditedChange => {
            const e = outboxFromRow(row);
            return e.state === 'expired'
              ? { write: 'outbox', id: e.id, client: e.client, state: 'expired', at: now, detail: { due_at: e.due_at, grace_ms: graceMs } }
              : {
                  write: 'outbox',
                  id: e.id,
                  client: e.client,
                  state: 'releasing',
                  at: now,
                  detail: { owner, from: row.prior, due_at: e.due_at },
                };
          }),
    );
    const out: DueClaim = { due: [], expired: [] };
    for (const row of rows) {
      const entry = outboxFromRow(row);
      (entry.state === 'expired' ? out.expired : out.due).push(entry);
    }
    out.due.sort((a, b) => a.due_at - b.due_at);
    return out;
  }

  async recordReleases(owner: string, items: readonly ReleaseRecord[], now: number): Promise<RecordWrite[]> {
    if (items.length === 0) return [];
    // A batch in four statements, set-based: one transaction (and one hold of the audit head)
    // per release queued every replica's releases behind the head's lock.
    return this.transaction(async (client) => {
      const checks = items.flatMap((it) => (it.optOut ? [it.optOut] : []));
      const opted = new Set<string>();
      if (checks.length > 0) {
        const { rows } = await client.query(
          'SELECT via, recipient FROM opt_outs WHERE via = ANY($1::text[]) AND recipient = ANY($2::text[])',
          [[...new Set(checks.map((c) => c.via))], [...new Set(checks.flatMap((c) => c.recipients))]],
        );
        for (const r of rows as Row[]) opted.add(`${r.via as string}\n${r.recipient as string}`);
      }
      const out: RecordWrite[] = items.map((it) => {
        const recipient = it.optOut?.recipients.find((r) => opted.has(`${it.optOut!.via}\n${r}`));
        return recipient === undefined ? WRITTEN : { kind: 'opted_out', recipient };
      });
      const candidates = items.filter((_, i) => out[i] === WRITTEN);
      const { rows: won } = await client.query(
        `UPDATE outbox o SET state = 'released', outcome = u.outcome, finished_at = $3
         FROM unnest($1::text[], $2::text[]) AS u(id, outcome)
         WHERE o.id = u.id AND o.owner = $4 AND o.state = 'releasing' RETURNING o.id`,
        [candidates.map((it) => it.id), candidates.map((it) => JSON.stringify(it.outcome ?? null)), now, owner],
      );
      const ours = new Set((won as Row[]).map((r) => r.id as string));
      items.forEach((it, i) => {
        if (out[i] === WRITTEN && !ours.has(it.id)) out[i] = { kind: 'claim_lost' };
      });
      const written = items.filter((_, i) => out[i] === WRITTEN);
      if (written.length > 0) {
        const rowsText = written.map((_, r) => `(${DELIVERY_COLUMNS.map((_, c) => `$${r * N + c + 1}`).join(', ')})`).join(', ');
        await client.query(
          `INSERT INTO deliveries (${DELIVERY_COLUMNS.join(', ')}) VALUES ${rowsText}`,
          written.flatMap((it) => deliveryValues(it.record)),
        );
        await this.appendAudit(
          client,
          written.flatMap((it): AuditedChange[] => [{ write: 'record', record: it.record, ctx: it.audit }, released(it, owner, now)]),
        );
      }
      return out;
    });
  }

  async chargeCaps(charges: readonly CapCharge[], now: number): Promise<CapDecision> {
    if (charges.length === 0) return { admitted: true };
    return withClient(this.pool, this.log, async (client) => {
      try {
        await client.query('BEGIN');
        // Row locks in one key order, so two sends sharing counters cannot deadlock.
        const sorted = [...charges].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
        for (const c of sorted) {
          await client.query('INSERT INTO cap_counters (key, used, resets_at) VALUES ($1, 0, $2) ON CONFLICT (key) DO NOTHING', [
            c.key,
            c.resets_at,
          ]);
        }
        const { rows } = await client.query(
          'SELECT key, used, resets_at FROM cap_counters WHERE key = ANY($1::text[]) ORDER BY key FOR UPDATE',
          [sorted.map((c) => c.key)],
        );
        const used = new Map((rows as Row[]).map((r) => [r.key as string, num(r.resets_at) <= now ? 0 : num(r.used)]));
        const over = charges.find((c) => (used.get(c.key) ?? 0) + c.amount > c.limit);
        if (over) {
          await client.query('ROLLBACK');
          return { admitted: false, key: over.key, used: used.get(over.key) ?? 0, resets_at: over.resets_at };
        }
        for (const c of sorted) {
          await client.query('UPDATE cap_counters SET used = $2, resets_at = $3 WHERE key = $1', [
            c.key,
            (used.get(c.key) ?? 0) + c.amount,
            c.resets_at,
          ]);
        }
        await client.query('COMMIT');
        return { admitted: true };
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
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

  async answerApproval(
    id: string,
    answer: ApprovalAnswer,
    now: number,
    ttlMs: number,
  ): Promise<{ answer: ApprovalAnswer; first: boolean }> {
    const key = `approval-answer:${id}`;
    // A row that vanishes between the upsert and the read was purged: answer again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const first = await this.transaction(async (client) => {
        const { rowCount } = await client.query({ ...ANSWER_APPROVAL, values: [key, answer, now, ttlMs] });
        if (rowCount === 1) await this.appendAudit(client, [{ write: 'answer', question: id, answer, at: now }]);
        return rowCount === 1;
      });
      if (first) return { answer, first: true };
      const { rows } = await this.pool.query({ ...q.CLAIM_READ, values: [key] });
      const row = rows[0] as Row | undefined;
      if (row) return { answer: row.payload_hash as ApprovalAnswer, first: false };
    }
    throw new StoreError(`approval answer "${id}" kept changing while being recorded`);
  }

  async knownContacts(via: string, recipients: readonly string[]): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ recipient: string }>(
      'SELECT recipient FROM contacts WHERE via = $1 AND recipient = ANY($2::text[])',
      [via, [...recipients]],
    );
    return new Set(rows.map((r) => r.recipient));
  }

  async addContacts(via: string, recipients: readonly string[], now: number, client: string | null): Promise<void> {
    await this.pool.query(
      'INSERT INTO contacts (via, recipient, approved_at, client) SELECT $1, r, $3, $4 FROM unnest($2::text[]) AS r ON CONFLICT DO NOTHING',
      [via, [...recipients], now, client],
    );
  }

  async insertBanner(b: BannerRecord): Promise<BannerRecord> {
    const insert = (db: pg.Pool | pg.PoolClient) => db.query({ ...q.INSERT_BANNER, values: bannerValues(b) });
    const dedupeKey = b.dedupe_key;
    if (dedupeKey === null) {
      await insert(this.pool);
      return { ...b };
    }
    return withClient(this.pool, this.log, async (client) => {
      try {
        await client.query('BEGIN');
        // Serialises writers of this audience's dedupe key only; released at COMMIT/ROLLBACK.
        await client.query(
          `SELECT pg_advisory_xact_lock(hashtext(json_build_array('notify-mcp:banner-dedupe', $1::text, $2::text)::text))`,
          [b.audience, dedupeKey],
        );
        const { rows } = await client.query({ ...q.ACTIVE_BY_DEDUPE, values: [b.audience, dedupeKey, b.created_at] });
        const existing = rows[0] ? bannerFromRow(rows[0] as Row) : null;
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

  async listBanners(query: { audiences?: string[]; status?: BannerStatus; now: number; limit?: number }): Promise<BannerRecord[]> {
    const params: unknown[] = [query.now, query.limit ?? null];
    const status = query.status !== undefined ? `AND ${bannerStatusSql(query.status, '$1')}` : '';
    let sql: string;
    if (query.audiences !== undefined) {
      // One index walk per audience, each stopping after `limit` rows (LATERAL … LIMIT), then
      // a sort of at most audiences × limit rows: `audience = ANY(…) ORDER BY` would read and
      // sort every matching row. Each banner has one audience, so the walks are disjoint.
      params.push([...new Set(query.audiences)]);
      sql = `SELECT ${BANNER_COLUMNS.split(', ')
        .map((c) => `b.${c}`)
        .join(', ')} FROM unnest($3::text[]) AS a(name)
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
    return rows.map((r) => bannerFromRow(r as Row));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** The store, its transient faults (connection lost or refused, server shutting down) thrown as StoreUnavailableError. */
export async function openPostgresStore(opts: PostgresStoreOptions): Promise<PostgresStore> {
  const engine = await PostgresEngine.open(opts);
  return storeThrough(engine, (_method, call) => classifyingFaults(engine.kind, call), { pool: engine.pool });
}

export type { PostgresStoreOptions } from './connection.js';
