/**
 * The default store: one SQLite file (`<dataDir>/notify.db`) in WAL mode, shared safely by
 * several processes. better-sqlite3 is synchronous, so within one process every statement
 * is already serialised; across processes, each read-decide-write is a single
 * `BEGIN IMMEDIATE` transaction (the write lock is taken before the read), and a busy
 * timeout makes writers queue instead of failing.
 * What both engines do alike is in ../sql/ (docs/architecture.md, "The store"); this folder
 * holds what differs; ./connection.ts opens the file.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Logger } from '../../core/log.js';
import { bannerStatusSql } from '../banner-status.js';
import { StoreError } from '../errors.js';
import { classifyingFaults } from '../faults.js';
import { storeThrough } from '../wrap.js';
import { auditEntriesFor, chain, released, type AuditedChange } from '../audit.js';
import {
  AUDIT_FILTERED,
  AUDIT_HASH_AT,
  AUDIT_LINES_SQLITE,
  auditLinesFromRow,
  AUDIT_PAGE,
  auditFromArray,
  INSERT_AUDIT,
  AUDIT_HEAD,
  AUDIT_PRUNE,
  AUDIT_PRUNE_UPTO,
  auditHeadFromRow,
  auditValues,
  MOVE_AUDIT_ANCHOR,
  MOVE_AUDIT_HEAD,
} from '../sql/audit.js';
import type {
  ApprovalAnswer,
  AuditContext,
  AuditEntry,
  AuditLines,
  AuditQuery,
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
import type { Dialect, Statement } from '../sql/dialect.js';
import {
  bannerFromRow,
  DELIVERY_COLUMNS,
  deliveryValues,
  HELD_RECEIPT_COLUMNS,
  heldReceiptFingerprint,
  heldReceiptFromRow,
  type Row,
} from '../sql/rows.js';
import { bannerValues, decisionValues, SqlStore, statusChangeValues } from '../sql/shared.js';
import { outboxFromRow, outboxStatements, outboxValues } from '../sql/outbox.js';
import { ENQUEUE_APPROVED } from '../sql/approval-writes.js';
import * as q from '../sql/statements.js';
import {
  openDatabase,
  DEFAULT_BUSY_TIMEOUT_MS,
  parseJson,
  retryWhileBusy,
  sharedStatements,
  SYNC_BUSY_MS,
  type Bound,
  type SqliteStoreOptions,
} from './connection.js';

const approvalAnswerKey = (id: string) => `approval-answer:${id}`;

interface KeyRow {
  payload_hash: string;
  state: 'pending' | 'done';
  phase: IdempotencyPhase;
  result: string | null;
  claimed_at: number;
  notification_id: string | null;
}

const WRITTEN: RecordWrite = Object.freeze({ kind: 'written' });
/** The same insert as a SELECT of its values, for a WHERE to decide whether it happens. */
const INSERT_DELIVERY_SELECT = `INSERT INTO deliveries (${DELIVERY_COLUMNS.join(', ')}) SELECT ${DELIVERY_COLUMNS.map(() => '?').join(', ')}`;
const { BANNER_COLUMNS } = q;
/** Expired idempotency rows are deleted at most this often (they already count as absent). */
const KEY_PURGE_INTERVAL_MS = 60_000;
/** Expired rate-limit admissions of idle buckets are deleted at most this often. */
const RATE_PURGE_INTERVAL_MS = 60_000;
/** Audience lists up to this long get one index walk each (SQLite caps a compound SELECT at 500 terms). */
const AUDIENCE_WALKS = 16;

/** The store as opened: the contract, and the database handle for tests and tools. */
export type SqliteStore = Store & { readonly db: Database.Database };

class SqliteEngine extends SqlStore implements Store {
  readonly kind = 'sqlite';
  private lastKeyPurge = 0;
  private lastRatePurge = 0;
  /** Statements by SQL text, prepared once: preparing costs more than running on the send path. */
  private readonly statements = new Map<string, Database.Statement>();
  /** writeRecord's opt-out transactions by recipient count, so a send neither rebuilds the SQL nor the transaction. */
  private readonly insertUnlessOptedOut = new Map<
    number,
    Database.Transaction<(r: DeliveryRecord, optOut: OptOutCheck, audit: AuditContext | undefined) => RecordWrite>
  >();
  /** A record and its audit entries, the commonest write: built once (better-sqlite3 compiles a transaction function per call otherwise). */
  private recordAuditedTx?: Database.Transaction<(r: DeliveryRecord, audit: AuditContext | undefined) => void>;
  private get recordAudited() {
    return (this.recordAuditedTx ??= this.db.transaction((r: DeliveryRecord, audit: AuditContext | undefined) => {
      this.shared(q.INSERT_DELIVERY).run(deliveryValues(r));
      this.appendAudit([{ write: 'record', record: r, ctx: audit }]);
    }));
  }
  /** The audit's page reads, raw (rows as arrays). */
  private readonly auditReads = new Map<string, Database.Statement>();
  /** The feed's statements by (status, audience count), so a hit does not rebuild the SQL. */
  private readonly byAudience = new Map<string, Database.Statement>();

  private constructor(
    readonly db: Database.Database,
    private readonly log: Logger,
    /** The shared statements, each prepared once. */
    private readonly shared: (s: Statement) => Bound,
  ) {
    super(
      {
        run: async (s, p) => shared(s).run(p).changes,
        get: async (s, p) => shared(s).get(p),
        all: async (s, p) => shared(s).all(p),
        json: parseJson,
      } satisfies Dialect,
      outboxStatements('sqlite', (p) => `SELECT value FROM json_each(${p})`),
    );
  }

  protected readonly listings = q.findListings('sqlite', { payload: 'payload', withoutCall: "json_remove(approval, '$.call')" });

  static open(opts: SqliteStoreOptions, Driver: typeof Database): SqliteEngine {
    const db = openDatabase(opts, Driver);
    opts.log.debug('store opened', { store: 'sqlite', file: opts.file });
    return new SqliteEngine(db, opts.log, sharedStatements(db));
  }
  /**
   * Appends audit entries to the chain. Call it inside the IMMEDIATE transaction of the
   * write they describe: the write lock, taken before the head is read, is what keeps
   * processes from forking the chain, and a rollback takes the entries with the write.
   */
  protected appendAudit(changes: readonly AuditedChange[]): void {
    if (changes.length === 0) return;
    const inputs = changes.flatMap(auditEntriesFor);
    const head = auditHeadFromRow(this.shared(AUDIT_HEAD).get([])!);
    const { entries, head: next } = chain(head, inputs);
    const insert = this.shared(INSERT_AUDIT);
    for (const e of entries) insert.run(auditValues(e));
    this.shared(MOVE_AUDIT_HEAD).run([next.seq, next.hash]);
  }

  protected async audited(s: Statement, params: readonly unknown[], changes: (rows: Row[]) => AuditedChange[]): Promise<Row[]> {
    const tx = this.db.transaction((): Row[] => {
      const rows = this.shared(s).all(params);
      this.appendAudit(changes(rows));
      return rows;
    });
    return tx.immediate();
  }

  async writeRecord(
    r: DeliveryRecord,
    opts: { optOut?: OptOutCheck; claim?: ClaimCompletion; audit?: AuditContext } = {},
  ): Promise<RecordWrite> {
    const { optOut, claim } = opts;
    if (claim) {
      const tx = this.db.transaction((): RecordWrite => {
        const optedOut = optOut && this.firstOptedOut(optOut);
        if (optedOut !== undefined) return { kind: 'opted_out', recipient: optedOut };
        const done = this.statement(
          `UPDATE idempotency_keys SET state = 'done', phase = 'sending', result = ? WHERE key = ? AND owner = ? AND state = 'pending'`,
        ).run(JSON.stringify(claim.result ?? null), claim.key, claim.owner);
        if (done.changes !== 1) return { kind: 'claim_lost' };
        this.shared(q.INSERT_DELIVERY).run(deliveryValues(r));
        this.appendAudit([{ write: 'record', record: r, ctx: opts.audit }]);
        return WRITTEN;
      });
      return tx.immediate();
    }
    if (!optOut) {
      this.recordAudited.immediate(r, opts.audit);
      return WRITTEN;
    }
    return this.recordUnlessOptedOut(optOut.recipients.length).immediate(r, optOut, opts.audit);
  }

  /**
   * writeRecord with an opt-out lookup (SMS, email) as one transaction, built once per
   * recipient count: `db.transaction()` wraps four functions and defines their properties on
   * every call, which a send paid each time.
   */
  private recordUnlessOptedOut(
    n: number,
  ): Database.Transaction<(r: DeliveryRecord, optOut: OptOutCheck, audit: AuditContext | undefined) => RecordWrite> {
    let tx = this.insertUnlessOptedOut.get(n);
    if (tx) return tx;
    // One statement, the lookup in the insert's WHERE: as cheap as the insert alone, where a
    // lookup and an insert (or both in one transaction) cost more.
    const insert = this.statement(
      `${INSERT_DELIVERY_SELECT} WHERE NOT EXISTS (SELECT 1 FROM opt_outs WHERE via = ? AND recipient IN (${Array.from({ length: n }, () => '?').join(', ')}))`,
    );
    tx = this.db.transaction((r: DeliveryRecord, optOut: OptOutCheck, audit: AuditContext | undefined): RecordWrite => {
      // Opt-outs are never removed, so a refused insert has one to name; the loop only guards a hand-edited database.
      for (let attempt = 0; attempt < 3; attempt++) {
        if (insert.run(...deliveryValues(r), optOut.via, ...optOut.recipients).changes === 1) {
          this.appendAudit([{ write: 'record', record: r, ctx: audit }]);
          return WRITTEN;
        }
        const optedOut = this.firstOptedOut(optOut);
        if (optedOut !== undefined) return { kind: 'opted_out', recipient: optedOut };
      }
      throw new StoreError(`delivery ${r.id} was neither recorded nor refused by an opt-out`);
    });
    this.insertUnlessOptedOut.set(n, tx);
    return tx;
  }

  async approveDelivery(id: string, d: DeliveryDecision, release: OutboxEntry): Promise<boolean> {
    const tx = this.db.transaction((): boolean => {
      if (this.shared(q.DECIDE_DELIVERY).run(decisionValues(id, d)).changes !== 1) return false;
      if (this.shared(ENQUEUE_APPROVED).run(outboxValues(release)).changes !== 1)
        throw new StoreError(`outbox entry ${id} is waiting or under way already; the approval was not written`);
      this.appendAudit([
        { write: 'decision', id, decision: d },
        { write: 'schedule', entry: release },
      ]);
      return true;
    });
    return tx.immediate();
  }

  override async updateDeliveryStatus(id: string, change: DeliveryStatusChange): Promise<boolean> {
    const tx = this.db.transaction((): boolean => {
      const moved = this.shared(q.UPDATE_DELIVERY_STATUS).run(statusChangeValues(id, change)).changes === 1;
      if (moved) this.appendAudit([{ write: 'receipt', id, change }]);
      return moved;
    });
    return tx.immediate();
  }

  /** Rows as arrays, mapped once: verify reads a million of them, and named rows cost twice. */
  override async auditEntries(query: AuditQuery): Promise<AuditEntry[]> {
    const filtered = query.since !== undefined || query.client !== undefined || query.notificationId !== undefined;
    const key = filtered ? AUDIT_FILTERED.text : AUDIT_PAGE.text;
    let stmt = this.auditReads.get(key);
    if (!stmt) this.auditReads.set(key, (stmt = this.db.prepare(key.replace(/\$(\d+)/g, '@p$1')).raw()));
    const params = filtered
      ? { p1: query.afterSeq, p2: query.limit, p3: query.since ?? null, p4: query.client ?? null, p5: query.notificationId ?? null }
      : { p1: query.afterSeq, p2: query.limit };
    return (stmt.all(params) as unknown[][]).map(auditFromArray);
  }

  async auditLines(afterSeq: number, limit: number): Promise<AuditLines> {
    return auditLinesFromRow(this.shared(AUDIT_LINES_SQLITE).get([afterSeq, limit]));
  }

  async pruneAudit(before: number, now: number): Promise<number> {
    const tx = this.db.transaction((): number => {
      const head = auditHeadFromRow(this.shared(AUDIT_HEAD).get([])!);
      const upto = this.shared(AUDIT_PRUNE_UPTO).get([before])?.upto;
      if (upto === null || upto === undefined || Number(upto) <= head.anchor_seq) return 0;
      const anchor = this.shared(AUDIT_HASH_AT).get([upto])!.hash as string;
      const n = this.shared(AUDIT_PRUNE).run([upto]).changes;
      this.shared(MOVE_AUDIT_ANCHOR).run([upto, anchor]);
      this.appendAudit([{ write: 'prune', anchor_seq: Number(upto), anchor_hash: anchor, at: now }]);
      return n;
    });
    return tx.immediate();
  }

  async holdReceipt(r: HeldReceipt, { now, maxAgeMs, maxRows, maxPerMessage }: HeldReceiptBounds): Promise<number | null> {
    // IMMEDIATE: the counts and the insert are one step across processes, so the caps hold.
    const tx = this.db.transaction((): number | null => {
      this.statement('DELETE FROM held_receipts WHERE received_at <= ?').run(now - maxAgeMs);
      const fingerprint = heldReceiptFingerprint(r);
      const same = this.statement('SELECT seq FROM held_receipts WHERE fingerprint = ?').get(fingerprint) as { seq: number } | undefined;
      if (same) return Number(same.seq);
      const { n } = this.statement('SELECT count(*) AS n FROM held_receipts').get() as { n: number };
      if (n >= maxRows) return null;
      const { m } = this.statement('SELECT count(*) AS m FROM held_receipts WHERE via = ? AND provider_message_id = ?').get(
        r.via,
        r.provider_message_id,
      ) as {
        m: number;
      };
      if (m >= maxPerMessage) return null;
      const { lastInsertRowid } = this.statement(
        'INSERT INTO held_receipts (via, provider_message_id, notification_id, event, provider_status, provider_status_code, received_at, fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ).run(
        r.via,
        r.provider_message_id,
        r.notification_id,
        r.event,
        r.provider_status,
        r.provider_status_code,
        r.received_at,
        fingerprint,
      );
      return Number(lastInsertRowid);
    });
    return tx.immediate();
  }

  async settleHeldReceipts<T>(
    target: HeldReceiptTarget,
    fold: (delivery: DeliveryRecord, held: readonly TakenReceipt[]) => HeldReceiptSettlement<T>,
  ): Promise<T | undefined> {
    const match = 'via = ? AND (provider_message_id = ? OR notification_id = ?)';
    const args = [target.via, target.provider_message_id, target.id];
    // Most records have nothing held: a read says so without taking the write lock (as on
    // PostgreSQL). A receipt held after this look finds the record itself (it looks again).
    if (this.statement(`SELECT 1 FROM held_receipts WHERE ${match} LIMIT 1`).get(...args) === undefined) return undefined;
    // IMMEDIATE: from the read to the delete no other process takes these rows or moves the delivery.
    const tx = this.db.transaction((): T | undefined => {
      const rows = this.statement(`SELECT ${HELD_RECEIPT_COLUMNS} FROM held_receipts WHERE ${match} ORDER BY seq`).all(...args) as Row[];
      if (rows.length === 0) return undefined;
      const row = this.shared(q.GET_DELIVERY).get([target.id]);
      if (!row) return undefined;
      const held = rows.map(heldReceiptFromRow);
      const { change, result } = fold(this.toDelivery(row), held);
      if (change && this.shared(q.UPDATE_DELIVERY_STATUS).run(statusChangeValues(target.id, change)).changes === 1) {
        this.appendAudit([{ write: 'receipt', id: target.id, change }]);
      }
      const del = this.statement('DELETE FROM held_receipts WHERE seq = ?');
      for (const h of held) del.run(h.seq);
      return result;
    });
    return tx.immediate();
  }

  async claimIdempotency(
    key: string,
    payloadHash: string,
    now: number,
    opts: { ttlMs: number; staleAfterMs: number; optOut?: OptOutCheck; notificationId?: string },
  ): Promise<IdempotencyClaim> {
    const tx = this.db.transaction((): IdempotencyClaim => {
      const optedOut = opts.optOut && this.firstOptedOut(opts.optOut);
      if (optedOut !== undefined) return { kind: 'opted_out', recipient: optedOut };
      if (now - this.lastKeyPurge >= KEY_PURGE_INTERVAL_MS) {
        this.statement('DELETE FROM idempotency_keys WHERE claimed_at <= ?').run(now - opts.ttlMs);
        this.lastKeyPurge = now;
      }
      const row = this.shared(q.CLAIM_READ).get([key]) as KeyRow | undefined;
      const expired = row === undefined || now - row.claimed_at >= opts.ttlMs;
      const free =
        expired ||
        // The owner died: same payload, pending past its budget. A different payload under
        // a stale claim stays a conflict until the key expires.
        (row.state === 'pending' && row.payload_hash === payloadHash && now - row.claimed_at >= opts.staleAfterMs);
      if (free) {
        // A taken-over claim keeps its phase: once a provider call may have started, no taker sends.
        // It keeps the id it was sending under, too; otherwise the taker sends under its own.
        const phase: IdempotencyPhase = expired ? 'claimed' : row.phase;
        const notificationId = phase === 'sending' ? row!.notification_id : (opts.notificationId ?? null);
        const owner = randomUUID();
        this.statement(
          `INSERT INTO idempotency_keys (key, payload_hash, state, result, claimed_at, owner, phase, notification_id) VALUES (?, ?, 'pending', NULL, ?, ?, ?, ?)
             ON CONFLICT (key) DO UPDATE SET payload_hash = excluded.payload_hash, state = 'pending', result = NULL,
               claimed_at = excluded.claimed_at, owner = excluded.owner, phase = excluded.phase, notification_id = excluded.notification_id`,
        ).run(key, payloadHash, now, owner, phase, notificationId);
        return notificationId === null
          ? { kind: 'claimed', owner, phase }
          : { kind: 'claimed', owner, phase, notification_id: notificationId };
      }
      if (row.state === 'pending') {
        return { kind: 'existing', payload_hash: row.payload_hash, state: 'pending', phase: row.phase, claimed_at: row.claimed_at };
      }
      return {
        kind: 'existing',
        payload_hash: row.payload_hash,
        state: 'done',
        result: row.result === null ? null : (JSON.parse(row.result) as unknown),
        claimed_at: row.claimed_at,
      };
    });
    return tx.immediate();
  }

  async admitRate(buckets: readonly RateBucket[], now: number): Promise<RateDecision> {
    // IMMEDIATE: the write lock is held from the count to the insert, so processes sharing
    // the file decide one after the other.
    const tx = this.db.transaction((): RateDecision => {
      if (now - this.lastRatePurge >= RATE_PURGE_INTERVAL_MS) {
        // Buckets of clients that stopped calling; active buckets are trimmed below.
        this.statement('DELETE FROM rate_admissions WHERE expires_at <= ?').run(now);
        this.lastRatePurge = now;
      }
      const waitMs = buckets.map((b) => {
        if (b.limit <= 0) return b.windowMs;
        // The limit-th newest admission still in the window: present means full, until it expires.
        const row = this.statement(
          'SELECT expires_at FROM rate_admissions WHERE bucket = ? AND expires_at > ? ORDER BY expires_at DESC LIMIT 1 OFFSET ?',
        ).get(b.key, now, b.limit - 1) as { expires_at: number } | undefined;
        return row === undefined ? null : row.expires_at - now;
      });
      if (waitMs.some((w) => w !== null)) return { admitted: false, waitMs };
      for (const b of buckets) {
        this.statement('DELETE FROM rate_admissions WHERE bucket = ? AND expires_at <= ?').run(b.key, now);
        this.statement('INSERT INTO rate_admissions (bucket, expires_at) VALUES (?, ?)').run(b.key, now + b.windowMs);
      }
      return { admitted: true };
    });
    return tx.immediate();
  }

  async claimDue(now: number, { limit, owner, leaseMs, graceMs, id }: DueClaimOptions): Promise<DueClaim> {
    // IMMEDIATE: the write lock is held from the read to the updates, so each due entry goes
    // to one process of those sharing the file.
    const tx = this.db.transaction((): DueClaim => {
      const where = `((state IN ('scheduled', 'held') AND due_at <= ?) OR (state = 'releasing' AND claimed_at <= ?))`;
      const rows = (
        id === undefined
          ? this.soonestDue(now, now - leaseMs, limit)
          : this.statement(`SELECT * FROM outbox WHERE ${where} AND id = ?`).all(now, now - leaseMs, id)
      ) as Row[];
      const claim = this.statement(`UPDATE outbox SET state = ?, owner = ?, claimed_at = ?, finished_at = ? WHERE id = ?`);
      const out: DueClaim = { due: [], expired: [] };
      const moves: AuditedChange[] = [];
      for (const row of rows) {
        const entry = outboxFromRow(row);
        // A release already under way keeps going (its idempotency claim decides); a send never started is too late past the grace.
        const late = entry.state !== 'releasing' && entry.due_at < now - graceMs;
        if (late) {
          claim.run('expired', null, entry.claimed_at, now, entry.id);
          out.expired.push({ ...entry, state: 'expired', finished_at: now });
          moves.push({
            write: 'outbox',
            id: entry.id,
            client: entry.client,
            state: 'expired',
            at: now,
            detail: { due_at: entry.due_at, grace_ms: graceMs },
          });
        } else {
          claim.run('releasing', owner, now, null, entry.id);
          out.due.push({ ...entry, state: 'releasing', owner, claimed_at: now });
          moves.push({
            write: 'outbox',
            id: entry.id,
            client: entry.client,
            state: 'releasing',
            at: now,
            detail: { owner, from: entry.state, due_at: entry.due_at },
          });
        }
      }
      this.appendAudit(moves);
      return out;
    });
    return tx.immediate();
  }

  /**
   * The `limit` soonest due entries (waiting, or releasing past their lease), one index walk
   * per state: one query with an OR sorted every due row for each batch it claimed.
   */
  private soonestDue(now: number, leaseEnded: number, limit: number): Row[] {
    const walk = this.statement(`SELECT * FROM outbox WHERE state = ? AND due_at <= ? ORDER BY due_at LIMIT ?`);
    const stale = this.statement(`SELECT * FROM outbox WHERE state = 'releasing' AND claimed_at <= ? ORDER BY due_at LIMIT ?`);
    const rows = [
      ...(walk.all('scheduled', now, limit) as Row[]),
      ...(walk.all('held', now, limit) as Row[]),
      ...(stale.all(leaseEnded, limit) as Row[]),
    ];
    return rows.sort((a, b) => Number(a.due_at) - Number(b.due_at)).slice(0, limit);
  }

  async recordReleases(owner: string, items: readonly ReleaseRecord[], now: number): Promise<RecordWrite[]> {
    // One transaction for a batch: a commit per release cost more than the release itself.
    const tx = this.db.transaction((): RecordWrite[] => {
      const finish = this.shared(this.ob.finish);
      const insert = this.shared(q.INSERT_DELIVERY);
      const audit: AuditedChange[] = [];
      const out = items.map((it): RecordWrite => {
        const optedOut = it.optOut && this.firstOptedOut(it.optOut);
        if (optedOut !== undefined) return { kind: 'opted_out', recipient: optedOut };
        if (finish.run(['released', JSON.stringify(it.outcome ?? null), now, it.id, owner]).changes !== 1) return { kind: 'claim_lost' };
        insert.run(deliveryValues(it.record));
        audit.push({ write: 'record', record: it.record, ctx: it.audit }, released(it, owner, now));
        return WRITTEN;
      });
      this.appendAudit(audit);
      return out;
    });
    return tx.immediate();
  }

  async chargeCaps(charges: readonly CapCharge[], now: number): Promise<CapDecision> {
    // IMMEDIATE: every counter is read and written under one lock, all or none.
    const tx = this.db.transaction((): CapDecision => {
      const read = this.statement('SELECT used, resets_at FROM cap_counters WHERE key = ?');
      const used = charges.map((c) => {
        const row = read.get(c.key) as { used: number; resets_at: number } | undefined;
        return row === undefined || row.resets_at <= now ? 0 : row.used;
      });
      const over = charges.findIndex((c, i) => used[i]! + c.amount > c.limit);
      if (over >= 0) return { admitted: false, key: charges[over]!.key, used: used[over]!, resets_at: charges[over]!.resets_at };
      const write = this.statement(
        'INSERT INTO cap_counters (key, used, resets_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET used = excluded.used, resets_at = excluded.resets_at',
      );
      charges.forEach((c, i) => write.run(c.key, used[i]! + c.amount, c.resets_at));
      return { admitted: true };
    });
    return tx.immediate();
  }

  async findOptedOut(check: OptOutCheck): Promise<string | undefined> {
    return this.firstOptedOut(check);
  }

  private firstOptedOut({ via, recipients }: OptOutCheck): string | undefined {
    const lookup = this.statement('SELECT 1 FROM opt_outs WHERE via = ? AND recipient = ?');
    return recipients.find((r) => lookup.get(via, r) !== undefined);
  }

  // Kept with the idempotency keys (and purged with them): a row whose payload_hash is the
  // answer, under a key no scoped send key can take (those are JSON arrays).
  async answerApproval(
    id: string,
    answer: ApprovalAnswer,
    now: number,
    ttlMs: number,
  ): Promise<{ answer: ApprovalAnswer; first: boolean }> {
    const tx = this.db.transaction((): { answer: ApprovalAnswer; first: boolean } => {
      const key = approvalAnswerKey(id);
      const inserted = this.statement(
        `INSERT INTO idempotency_keys (key, payload_hash, state, result, claimed_at, owner, phase) VALUES (?, ?, 'done', NULL, ?, NULL, 'sending')
         ON CONFLICT (key) DO UPDATE SET payload_hash = excluded.payload_hash, claimed_at = excluded.claimed_at WHERE idempotency_keys.claimed_at <= ?`,
      ).run(key, answer, now, now - ttlMs);
      if (inserted.changes === 1) {
        this.appendAudit([{ write: 'answer', question: id, answer, at: now }]);
        return { answer, first: true };
      }
      const row = this.shared(q.CLAIM_READ).get([key]) as { payload_hash: ApprovalAnswer };
      return { answer: row.payload_hash, first: false };
    });
    return tx.immediate();
  }

  async knownContacts(via: string, recipients: readonly string[]): Promise<Set<string>> {
    const known = this.statement('SELECT 1 FROM contacts WHERE via = ? AND recipient = ?');
    return new Set(recipients.filter((r) => known.get(via, r) !== undefined));
  }

  async addContacts(via: string, recipients: readonly string[], now: number, client: string | null): Promise<void> {
    const add = this.statement('INSERT INTO contacts (via, recipient, approved_at, client) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING');
    this.db.transaction(() => recipients.forEach((r) => add.run(via, r, now, client)))();
  }

  async insertBanner(b: BannerRecord): Promise<BannerRecord> {
    const tx = this.db.transaction((): BannerRecord => {
      if (b.dedupe_key !== null) {
        const existing = this.activeByDedupe(b.audience, b.dedupe_key, b.created_at);
        if (existing) return existing;
      }
      this.shared(q.INSERT_BANNER).run(bannerValues(b));
      return { ...b };
    });
    return tx.immediate();
  }

  private activeByDedupe(audience: string, dedupeKey: string, now: number): BannerRecord | null {
    const row = this.shared(q.ACTIVE_BY_DEDUPE).get([audience, dedupeKey, now]);
    return row ? bannerFromRow(row) : null;
  }

  async listBanners(query: { audiences?: string[]; status?: BannerStatus; now: number; limit?: number }): Promise<BannerRecord[]> {
    const limit = query.limit ?? -1;
    if (query.audiences !== undefined) return this.listBannersByAudience([...new Set(query.audiences)], query.status, query.now, limit);
    const params = { now: query.now, limit };
    const where = query.status !== undefined ? `WHERE ${bannerStatusSql(query.status, '@now')}` : '';
    const sql = `SELECT ${BANNER_COLUMNS} FROM banners ${where} ORDER BY created_at DESC, seq DESC LIMIT @limit`;
    return this.statement(sql).all(params) as BannerRecord[];
  }

  /**
   * One index walk per audience, each stopping after `limit` rows, combined by UNION ALL
   * and cut to `limit` in SQL, so only the answer is materialised: `audience IN (…) ORDER
   * BY` would, with any index but one ending in `seq DESC`, read and sort every matching
   * row. Each banner has one audience, so the walks are disjoint. A list longer than
   * AUDIENCE_WALKS (rare: apps pass a viewer's few segments) takes the IN form on the same
   * index, where SQLite's ORDER BY LIMIT optimisation usually stops each walk early too.
   */
  private listBannersByAudience(audiences: string[], status: BannerStatus | undefined, now: number, limit: number): BannerRecord[] {
    if (audiences.length === 0) return [];
    const params: Record<string, unknown> = status !== undefined ? { now, limit } : { limit };
    if (audiences.length > AUDIENCE_WALKS) {
      params.audiences = JSON.stringify(audiences);
      return this.byAudienceStatement(status, 0).all(params) as BannerRecord[];
    }
    audiences.forEach((audience, j) => (params[`a${j}`] = audience));
    return this.byAudienceStatement(status, audiences.length).all(params) as BannerRecord[];
  }

  /** `audiences` 0: the IN form over a JSON array. */
  private byAudienceStatement(status: BannerStatus | undefined, audiences: number): Database.Statement {
    const key = `${status ?? 'any'}:${audiences}`;
    let stmt = this.byAudience.get(key);
    if (!stmt) {
      // INDEXED BY makes a plan that cannot use the index an error, not a silent full sort.
      const from = `FROM banners INDEXED BY ${status === 'active' ? 'banners_active' : 'banners_newest'}`;
      const filter = status !== undefined ? `AND ${bannerStatusSql(status, '@now')}` : '';
      const order = 'ORDER BY created_at DESC, seq DESC LIMIT @limit';
      const walks = Array.from(
        { length: audiences },
        (_, j) => `SELECT * FROM (SELECT seq, ${BANNER_COLUMNS} ${from} WHERE audience = @a${j} ${filter} ${order})`,
      );
      stmt = this.statement(
        audiences === 0
          ? `SELECT ${BANNER_COLUMNS} ${from} WHERE audience IN (SELECT value FROM json_each(@audiences)) ${filter} ${order}`
          : `SELECT ${BANNER_COLUMNS} FROM (${walks.join(' UNION ALL ')}) ${order}`,
      );
      this.byAudience.set(key, stmt);
    }
    return stmt;
  }

  private statement(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

/**
 * The store, waiting for other processes' locks without holding the event loop, and its
 * transient faults (busy past the timeout, full, I/O) thrown as StoreUnavailableError.
 */
export async function openSqliteStore(opts: SqliteStoreOptions): Promise<SqliteStore> {
  const engine = SqliteEngine.open(opts, (await import('better-sqlite3')).default);
  // From here on SQLite itself waits at most SYNC_BUSY_MS for a lock: its busy handler
  // sleeps inside the call, and so holds this process's event loop (every client, /healthz)
  // for as long as it waits. Longer waits are made between attempts, on timers.
  engine.db.pragma(`busy_timeout = ${SYNC_BUSY_MS}`);
  const timeoutMs = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  // Every call but close waits out another process's lock; every call's faults are classified.
  return storeThrough(
    engine,
    (method, call) => classifyingFaults(engine.kind, method === 'close' ? call : () => retryWhileBusy(call, timeoutMs)),
    { db: engine.db },
  );
}
export { SQLITE_FILE_NAME, sqliteFile, type SqliteStoreOptions } from './connection.js';
