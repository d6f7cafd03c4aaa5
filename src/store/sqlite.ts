/**
 * The default store: one SQLite file (`<dataDir>/notify.db`) in WAL mode, shared safely by
 * several processes. better-sqlite3 is synchronous, so within one process every statement
 * is already serialised; across processes, each read-decide-write is a single
 * `BEGIN IMMEDIATE` transaction (the write lock is taken before the read), and a busy
 * timeout makes writers queue instead of failing.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type Database from 'better-sqlite3';
import type { Logger } from '../core/log.js';
import { bannerStatusSql } from './banner-status.js';
import { StoreError } from './errors.js';
import { classifyStoreFaults } from './faults.js';
import { LATEST_VERSION, MIGRATIONS } from './migrations.js';
import type {
  ApprovalAnswer,
  BannerRecord,
  BannerStatus,
  ContactRecord,
  ClaimCompletion,
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
import { DELIVERY_COLUMNS, deliveryFromRow, deliveryValues, HELD_RECEIPT_COLUMNS, heldReceiptFingerprint, heldReceiptFromRow, insertDeliverySql, type Row } from './rows.js';

export const SQLITE_FILE_NAME = 'notify.db';

const approvalAnswerKey = (id: string) => `approval-answer:${id}`;

export function sqliteFile(dataDir: string): string {
  return join(dataDir, SQLITE_FILE_NAME);
}

export interface SqliteStoreOptions {
  /** Path of the database file; its directory is created if missing. */
  file: string;
  log: Logger;
  /**
   * How long a call waits for another process's lock before failing (default 10 s): in
   * SQLite at start-up (migrations), then in short synchronous waits between timers.
   */
  busyTimeoutMs?: number;
}

const toDelivery = (r: Row): DeliveryRecord => deliveryFromRow(r, (v) => JSON.parse(v as string) as unknown);

interface KeyRow {
  payload_hash: string;
  state: 'pending' | 'done';
  phase: IdempotencyPhase;
  result: string | null;
  claimed_at: number;
}

const WRITTEN: RecordWrite = Object.freeze({ kind: 'written' });
const INSERT_DELIVERY = insertDeliverySql(() => '?');
/** The same insert as a SELECT of its values, for a WHERE to decide whether it happens. */
const INSERT_DELIVERY_SELECT = `INSERT INTO deliveries (${DELIVERY_COLUMNS.join(', ')}) SELECT ${DELIVERY_COLUMNS.map(() => '?').join(', ')}`;
const BANNER_COLUMNS = 'id, text, audience, severity, dedupe_key, created_at, expires_at, dismissed_at';
/** Expired idempotency rows are deleted at most this often (they already count as absent). */
const KEY_PURGE_INTERVAL_MS = 60_000;
/** Expired rate-limit admissions of idle buckets are deleted at most this often. */
const RATE_PURGE_INTERVAL_MS = 60_000;
/** Audience lists up to this long get one index walk each (SQLite caps a compound SELECT at 500 terms). */
const AUDIENCE_WALKS = 16;

function migrate(db: Database.Database, log: Logger): void {
  const run = db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
    const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
    const current = row.v ?? 0;
    if (current > LATEST_VERSION) {
      throw new StoreError(
        `the SQLite store is at schema version ${current}, newer than this build knows (${LATEST_VERSION}); upgrade notify-mcp`,
      );
    }
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      db.exec(m.sqlite);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now());
      log.info('store migrated', { store: 'sqlite', version: m.version, migration: m.name });
    }
  });
  // IMMEDIATE: two processes starting together migrate one after the other, never both.
  run.immediate();
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  private lastKeyPurge = 0;
  private lastRatePurge = 0;
  /** Statements by SQL text, prepared once: preparing cost more than running on the send path. */
  private readonly statements = new Map<string, Database.Statement>();
  /** writeRecord's opt-out inserts by recipient count, so a send does not rebuild the SQL. */
  private readonly insertUnlessOptedOut = new Map<number, Database.Statement>();
  /** The feed's statements by (status, audience count), so a hit does not rebuild the SQL. */
  private readonly byAudience = new Map<string, Database.Statement>();

  private constructor(
    readonly db: Database.Database,
    private readonly log: Logger,
  ) {}

  /** `Driver`: better-sqlite3's Database, imported by openSqliteStore when a store is opened, not at start-up. */
  static open(opts: SqliteStoreOptions, Driver: typeof Database): SqliteStore {
    mkdirSync(dirname(opts.file), { recursive: true });
    const db = new Driver(opts.file, { timeout: opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
    try {
      db.pragma(`busy_timeout = ${Math.trunc(opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS)}`);
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (String(mode).toLowerCase() !== 'wal') throw new StoreError(`could not put ${opts.file} in WAL mode (got ${String(mode)})`);
      // NORMAL under WAL: a commit survives a process crash (SIGKILL included); a power loss
      // may undo the last commits. FULL would fsync every delivery record, which measured
      // as most of a dry-run send's time (bench/results.md).
      db.pragma('synchronous = NORMAL');
      migrate(db, opts.log);
    } catch (err) {
      db.close();
      throw err;
    }
    opts.log.debug('store opened', { store: 'sqlite', file: opts.file });
    return new SqliteStore(db, opts.log);
  }

  async writeRecord(r: DeliveryRecord, opts: { optOut?: OptOutCheck; claim?: ClaimCompletion } = {}): Promise<RecordWrite> {
    const { optOut, claim } = opts;
    if (claim) {
      const tx = this.db.transaction((): RecordWrite => {
        const optedOut = optOut && this.firstOptedOut(optOut);
        if (optedOut !== undefined) return { kind: 'opted_out', recipient: optedOut };
        const done = this.statement(
          `UPDATE idempotency_keys SET state = 'done', phase = 'sending', result = ? WHERE key = ? AND owner = ? AND state = 'pending'`,
        ).run(JSON.stringify(claim.result ?? null), claim.key, claim.owner);
        if (done.changes !== 1) return { kind: 'claim_lost' };
        this.statement(INSERT_DELIVERY).run(...deliveryValues(r));
        return WRITTEN;
      });
      return tx.immediate();
    }
    if (!optOut) {
      this.statement(INSERT_DELIVERY).run(...deliveryValues(r));
      return WRITTEN;
    }
    // One statement, the lookup in the insert's WHERE: as cheap as the insert alone, where a
    // lookup and an insert (or both in one transaction) cost more.
    const n = optOut.recipients.length;
    let insert = this.insertUnlessOptedOut.get(n);
    if (!insert) {
      insert = this.statement(`${INSERT_DELIVERY_SELECT} WHERE NOT EXISTS (SELECT 1 FROM opt_outs WHERE via = ? AND recipient IN (${optOut.recipients.map(() => '?').join(', ')}))`);
      this.insertUnlessOptedOut.set(n, insert);
    }
    // Opt-outs are never removed, so a refused insert has one to name; the loop only guards a hand-edited database.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (insert.run(...deliveryValues(r), optOut.via, ...optOut.recipients).changes === 1) return WRITTEN;
      const optedOut = this.firstOptedOut(optOut);
      if (optedOut !== undefined) return { kind: 'opted_out', recipient: optedOut };
    }
    throw new StoreError(`delivery ${r.id} was neither recorded nor refused by an opt-out`);
  }

  async listDeliveries(limit: number): Promise<DeliveryRecord[]> {
    const rows = this.statement('SELECT * FROM deliveries ORDER BY created_at DESC, seq DESC LIMIT ?')
      .all(Math.max(0, Math.trunc(limit))) as Row[];
    return rows.map(toDelivery);
  }

  async getDelivery(id: string): Promise<DeliveryRecord | null> {
    const row = this.statement('SELECT * FROM deliveries WHERE id = ?').get(id) as Row | undefined;
    return row ? toDelivery(row) : null;
  }

  async findDeliveryByProviderMessage(via: string, providerMessageId: string): Promise<DeliveryRecord | null> {
    const row = this.statement('SELECT * FROM deliveries WHERE via = ? AND provider_message_id = ? ORDER BY seq LIMIT 1').get(
      via,
      providerMessageId,
    ) as Row | undefined;
    return row ? toDelivery(row) : null;
  }

  async updateDeliveryStatus(id: string, c: DeliveryStatusChange): Promise<boolean> {
    const { changes } = this.statement(
      'UPDATE deliveries SET status = ?, provider_status = ?, provider_status_code = ?, status_updated_at = ?, provider_message_id = COALESCE(provider_message_id, ?) WHERE id = ? AND status = ?',
    ).run(c.status, c.provider_status, c.provider_status_code, c.at, c.provider_message_id ?? null, id, c.from);
    return changes === 1;
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
      const { m } = this.statement('SELECT count(*) AS m FROM held_receipts WHERE via = ? AND provider_message_id = ?').get(r.via, r.provider_message_id) as {
        m: number;
      };
      if (m >= maxPerMessage) return null;
      const { lastInsertRowid } = this.statement(
        'INSERT INTO held_receipts (via, provider_message_id, notification_id, event, provider_status, provider_status_code, received_at, fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ).run(r.via, r.provider_message_id, r.notification_id, r.event, r.provider_status, r.provider_status_code, r.received_at, fingerprint);
      return Number(lastInsertRowid);
    });
    return tx.immediate();
  }

  async settleHeldReceipts<T>(
    target: HeldReceiptTarget,
    fold: (delivery: DeliveryRecord, held: readonly TakenReceipt[]) => HeldReceiptSettlement<T>,
  ): Promise<T | undefined> {
    // IMMEDIATE: from the read to the delete no other process takes these rows or moves the delivery.
    const tx = this.db.transaction((): T | undefined => {
      const rows = this.statement(
        `SELECT ${HELD_RECEIPT_COLUMNS} FROM held_receipts WHERE via = ? AND (provider_message_id = ? OR notification_id = ?) ORDER BY seq`,
      ).all(target.via, target.provider_message_id, target.id) as Row[];
      if (rows.length === 0) return undefined;
      const row = this.statement('SELECT * FROM deliveries WHERE id = ?').get(target.id) as Row | undefined;
      if (!row) return undefined;
      const held = rows.map(heldReceiptFromRow);
      const { change, result } = fold(toDelivery(row), held);
      if (change) {
        this.statement(
          'UPDATE deliveries SET status = ?, provider_status = ?, provider_status_code = ?, status_updated_at = ?, provider_message_id = COALESCE(provider_message_id, ?) WHERE id = ? AND status = ?',
        ).run(change.status, change.provider_status, change.provider_status_code, change.at, change.provider_message_id ?? null, target.id, change.from);
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
    opts: { ttlMs: number; staleAfterMs: number; optOut?: OptOutCheck },
  ): Promise<IdempotencyClaim> {
    const tx = this.db.transaction((): IdempotencyClaim => {
      const optedOut = opts.optOut && this.firstOptedOut(opts.optOut);
      if (optedOut !== undefined) return { kind: 'opted_out', recipient: optedOut };
      if (now - this.lastKeyPurge >= KEY_PURGE_INTERVAL_MS) {
        this.statement('DELETE FROM idempotency_keys WHERE claimed_at <= ?').run(now - opts.ttlMs);
        this.lastKeyPurge = now;
      }
      const row = this.statement('SELECT payload_hash, state, phase, result, claimed_at FROM idempotency_keys WHERE key = ?').get(key) as
        | KeyRow
        | undefined;
      const expired = row === undefined || now - row.claimed_at >= opts.ttlMs;
      const free =
        expired ||
        // The owner died: same payload, pending past its budget. A different payload under
        // a stale claim stays a conflict until the key expires.
        (row.state === 'pending' && row.payload_hash === payloadHash && now - row.claimed_at >= opts.staleAfterMs);
      if (free) {
        // A taken-over claim keeps its phase: once a provider call may have started, no taker sends.
        const phase: IdempotencyPhase = expired ? 'claimed' : row.phase;
        const owner = randomUUID();
        this.statement(
            `INSERT INTO idempotency_keys (key, payload_hash, state, result, claimed_at, owner, phase) VALUES (?, ?, 'pending', NULL, ?, ?, ?)
             ON CONFLICT (key) DO UPDATE SET payload_hash = excluded.payload_hash, state = 'pending', result = NULL,
               claimed_at = excluded.claimed_at, owner = excluded.owner, phase = excluded.phase`,
          )
          .run(key, payloadHash, now, owner, phase);
        return { kind: 'claimed', owner, phase };
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

  // Fenced: each write names the owner, so one that lost its claim changes nothing.
  async markIdempotencySending(key: string, owner: string): Promise<boolean> {
    return (
      this.statement(`UPDATE idempotency_keys SET phase = 'sending' WHERE key = ? AND owner = ? AND state = 'pending'`).run(key, owner)
        .changes === 1
    );
  }

  async completeIdempotency(key: string, owner: string, result: unknown): Promise<boolean> {
    return (
      this.statement(`UPDATE idempotency_keys SET state = 'done', result = ? WHERE key = ? AND owner = ? AND state = 'pending'`).run(
        JSON.stringify(result ?? null),
        key,
        owner,
      ).changes === 1
    );
  }

  async releaseIdempotency(key: string, owner: string): Promise<boolean> {
    // Only a pending claim: a finished send's result must stay replayable.
    return this.statement(`DELETE FROM idempotency_keys WHERE key = ? AND owner = ? AND state = 'pending'`).run(key, owner).changes === 1;
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

  async findOptedOut(check: OptOutCheck): Promise<string | undefined> {
    return this.firstOptedOut(check);
  }

  private firstOptedOut({ via, recipients }: OptOutCheck): string | undefined {
    const lookup = this.statement('SELECT 1 FROM opt_outs WHERE via = ? AND recipient = ?');
    return recipients.find((r) => lookup.get(via, r) !== undefined);
  }

  async addOptOut(via: string, recipient: string, now: number): Promise<void> {
    this.statement('INSERT INTO opt_outs (via, recipient, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING').run(via, recipient, now);
  }

  // Kept with the idempotency keys (and purged with them): a row whose payload_hash is the
  // answer, under a key no scoped send key can take (those are JSON arrays).
  async answerApproval(id: string, answer: ApprovalAnswer, now: number, ttlMs: number): Promise<{ answer: ApprovalAnswer; first: boolean }> {
    const tx = this.db.transaction((): { answer: ApprovalAnswer; first: boolean } => {
      const key = approvalAnswerKey(id);
      const inserted = this.statement(
        `INSERT INTO idempotency_keys (key, payload_hash, state, result, claimed_at, owner, phase) VALUES (?, ?, 'done', NULL, ?, NULL, 'sending')
         ON CONFLICT (key) DO UPDATE SET payload_hash = excluded.payload_hash, claimed_at = excluded.claimed_at WHERE idempotency_keys.claimed_at <= ?`,
      ).run(key, answer, now, now - ttlMs);
      if (inserted.changes === 1) return { answer, first: true };
      const row = this.statement('SELECT payload_hash FROM idempotency_keys WHERE key = ?').get(key) as { payload_hash: ApprovalAnswer };
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

  async listContacts(): Promise<ContactRecord[]> {
    return this.statement('SELECT via, recipient, approved_at, client FROM contacts ORDER BY via, recipient').all() as ContactRecord[];
  }

  async forgetContact(via: string, recipient: string): Promise<boolean> {
    return this.statement('DELETE FROM contacts WHERE via = ? AND recipient = ?').run(via, recipient).changes > 0;
  }

  async insertBanner(b: BannerRecord): Promise<BannerRecord> {
    const tx = this.db.transaction((): BannerRecord => {
      if (b.dedupe_key !== null) {
        const existing = this.activeByDedupe(b.audience, b.dedupe_key, b.created_at);
        if (existing) return existing;
      }
      this.statement(`INSERT INTO banners (${BANNER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
        .run(b.id, b.text, b.audience, b.severity, b.dedupe_key, b.created_at, b.expires_at, b.dismissed_at);
      return { ...b };
    });
    return tx.immediate();
  }

  async purgeBanners(before: number): Promise<number> {
    return this.statement('DELETE FROM banners WHERE dismissed_at < ? OR expires_at < ?').run(before, before).changes;
  }

  async getBanner(id: string): Promise<BannerRecord | null> {
    return (this.statement(`SELECT ${BANNER_COLUMNS} FROM banners WHERE id = ?`).get(id) as BannerRecord | undefined) ?? null;
  }

  async findActiveBannerByDedupe(audience: string, dedupeKey: string, now: number): Promise<BannerRecord | null> {
    return this.activeByDedupe(audience, dedupeKey, now);
  }

  private activeByDedupe(audience: string, dedupeKey: string, now: number): BannerRecord | null {
    const row = this.statement(
        `SELECT ${BANNER_COLUMNS} FROM banners WHERE audience = @audience AND dedupe_key = @key AND ${bannerStatusSql('active', '@now')}
         ORDER BY created_at DESC, seq DESC LIMIT 1`,
      )
      .get({ audience, key: dedupeKey, now }) as BannerRecord | undefined;
    return row ?? null;
  }

  async dismissBanner(id: string, now: number): Promise<BannerRecord | null> {
    this.statement('UPDATE banners SET dismissed_at = ? WHERE id = ? AND dismissed_at IS NULL').run(now, id);
    return this.getBanner(id);
  }

  async endBanner(id: string, now: number): Promise<{ banner: BannerRecord; dismissed: boolean } | null> {
    const dismissed = this.statement(`UPDATE banners SET dismissed_at = @now WHERE id = @id AND ${bannerStatusSql('active', '@now')}`).run({ id, now }).changes > 0;
    // Read after the claim: what stops a banner being active (dismissal, expiry) is final.
    const banner = await this.getBanner(id);
    return banner ? { banner, dismissed } : null;
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

  async bannersVersion(): Promise<string> {
    const row = this.statement('SELECT epoch, n FROM banners_version WHERE id = 1').get() as { epoch: string; n: number } | undefined;
    if (!row) throw new StoreError('banners_version has no row; the database was altered by hand');
    return `${row.epoch}:${row.n}`;
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
  const store = SqliteStore.open(opts, (await import('better-sqlite3')).default);
  // From here on SQLite itself waits at most SYNC_BUSY_MS for a lock: its busy handler
  // sleeps inside the call, and so holds this process's event loop (every client, /healthz)
  // for as long as it waits. Longer waits are made between attempts, on timers.
  store.db.pragma(`busy_timeout = ${SYNC_BUSY_MS}`);
  return classifyStoreFaults(retryWhileBusy(store, opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS));
}

/** How long one statement may wait for a lock inside SQLite (synchronously). */
const SYNC_BUSY_MS = 20;
const DEFAULT_BUSY_TIMEOUT_MS = 10_000;

const isBusy = (err: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(String((err as { code?: unknown } | null)?.code ?? ''));

/**
 * Every method of `store` retried while another process holds the lock it needs, up to
 * `timeoutMs` in all, with jittered waits on timers between attempts. A retry is safe:
 * each method is one statement or one transaction, and a busy one changed nothing (a
 * method's later, idempotent read may repeat its write: dismissBanner).
 */
function retryWhileBusy(store: SqliteStore, timeoutMs: number): SqliteStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || prop === 'constructor' || prop === 'close') return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        const deadline = Date.now() + timeoutMs;
        for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
          try {
            return await method.apply(target, args);
          } catch (err) {
            const left = deadline - Date.now();
            if (!isBusy(err) || left <= 0) throw err;
            await new Promise((r) => setTimeout(r, Math.min(left, wait / 2 + Math.random() * wait)));
          }
        }
      };
    },
  });
}
