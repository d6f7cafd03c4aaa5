/**
 * The default store: one SQLite file (`<dataDir>/notify.db`) in WAL mode, shared safely by
 * several processes. better-sqlite3 is synchronous, so within one process every statement
 * is already serialised; across processes, each read-decide-write is a single
 * `BEGIN IMMEDIATE` transaction (the write lock is taken before the read), and a busy
 * timeout makes writers queue instead of failing.
 * What both engines do alike is in ../sql/ (docs/architecture.md, "The store"); this folder
 * holds what differs; ./connection.ts opens the file.
 */
import type Database from 'better-sqlite3';
import type { Logger } from '../../core/log.js';
import { StoreError } from '../errors.js';
import { classifyingFaults } from '../faults.js';
import { storeThrough } from '../wrap.js';
import { auditEntriesFor, chain, type AuditedChange } from '../audit.js';
import type { AuditActor, AuditContext, AuditEntry, AuditQuery } from '../ports/audit.js';
import type { ClaimCompletion } from '../ports/claims.js';
import type { OptOutCheck } from '../ports/contacts.js';
import type { DeliveryDecision, DeliveryRecord, DeliveryStatusChange, RecordWrite } from '../ports/deliveries.js';
import type { OutboxEntry, TakeBack } from '../ports/outbox.js';
import type { Store } from '../types.js';
import { AUDIT_HEAD, auditHeadFromRow, auditValues, INSERT_AUDIT, MOVE_AUDIT_HEAD } from '../sql/audit.js';
import type { Dialect, Statement } from '../sql/dialect.js';
import { DELIVERY_COLUMNS, deliveryValues, WRITTEN, type Row } from '../sql/rows.js';
import { decisionValues, SqlStore, statusChangeValues } from '../sql/shared.js';
import { outboxStatements, outboxValues } from '../sql/outbox.js';
import { ENQUEUE_APPROVED } from '../sql/approval-writes.js';
import { takeBackSteps } from '../sql/take-back.js';
import { sqlAnswers } from '../sql/answers.js';
import { sqlEscalations, type Step } from '../sql/escalations.js';
import * as q from '../sql/statements.js';
import { sqliteAudit } from './audit.js';
import { sqliteBanners } from './banners.js';
import { sqliteClaims } from './claims.js';
import {
  DEFAULT_BUSY_TIMEOUT_MS,
  openDatabase,
  parseJson,
  retryWhileBusy,
  sharedStatements,
  SYNC_BUSY_MS,
  type Bound,
  type SqliteStoreOptions,
} from './connection.js';
import { sqliteCounters } from './counters.js';
import type { SqliteEngine } from './engine.js';
import { sqliteOutbox } from './outbox.js';
import { sqliteReceipts } from './receipts.js';

/** The same insert as a SELECT of its values, for a WHERE to decide whether it happens. */
const INSERT_DELIVERY_SELECT = `INSERT INTO deliveries (${DELIVERY_COLUMNS.join(', ')}) SELECT ${DELIVERY_COLUMNS.map(() => '?').join(', ')}`;

/** The store as opened: the contract, and the database handle for tests and tools. */
export type SqliteStore = Store & { readonly db: Database.Database };

/**
 * The engine: what the two engines share (../sql/shared.ts), the writes whose transaction
 * is this file's (the record, the approval, a receipt's status), contacts and opt-outs, and
 * one factory per aggregate for the rest (./claims.ts, ./outbox.ts, ./receipts.ts,
 * ./counters.ts, ./banners.ts, ./audit.ts), each method delegated by name.
 */
class Sqlite extends SqlStore implements Store, SqliteEngine {
  readonly kind = 'sqlite';

  private readonly claims = sqliteClaims(this);
  readonly claimIdempotency = this.claims.claimIdempotency;
  readonly answerApproval = this.claims.answerApproval;
  private readonly outbox = sqliteOutbox(this);
  readonly claimDue = this.outbox.claimDue;
  readonly recordReleases = this.outbox.recordReleases;
  private readonly receipts = sqliteReceipts(this);
  readonly holdReceipt = this.receipts.holdReceipt;
  readonly settleHeldReceipts = this.receipts.settleHeldReceipts;
  private readonly counters = sqliteCounters(this);
  readonly admitRate = this.counters.admitRate;
  readonly chargeCaps = this.counters.chargeCaps;
  private readonly banners = sqliteBanners(this);
  readonly insertBanner = this.banners.insertBanner;
  readonly listBanners = this.banners.listBanners;
  private readonly answers = sqlAnswers(
    'sqlite',
    this.sql,
    (steps, c) => this.auditedAll(steps, c),
    (p) => `SELECT value FROM json_each(${p})`,
  );
  readonly answerKey = this.answers.answerKey;
  readonly recordQuestion = this.answers.recordQuestion;
  readonly getQuestion = this.answers.getQuestion;
  readonly questionByToken = this.answers.questionByToken;
  readonly unansweredQuestionsTo = this.answers.unansweredQuestionsTo;
  readonly answeredAmong = this.answers.answeredAmong;
  readonly openQuestions = this.answers.openQuestions;
  readonly answerQuestion = this.answers.answerQuestion;
  private readonly escalations = sqlEscalations(this.sql, (steps, c) => this.auditedAll(steps, c));
  readonly escalationSteps = this.escalations.escalationSteps;
  readonly scheduleEscalation = this.escalations.scheduleEscalation;
  readonly cancelEscalation = this.escalations.cancelEscalation;
  private readonly audit = sqliteAudit(this);
  readonly auditLines = this.audit.auditLines;
  readonly pruneAudit = this.audit.pruneAudit;

  /** Statements by SQL text, prepared once: on the send path, preparing is the dear part. */
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

  private constructor(
    readonly db: Database.Database,
    private readonly log: Logger,
    /** The shared statements, each prepared once. */
    readonly shared: (s: Statement) => Bound,
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

  static open(opts: SqliteStoreOptions, Driver: typeof Database): Sqlite {
    const db = openDatabase(opts, Driver);
    opts.log.debug('store opened', { store: 'sqlite', file: opts.file });
    return new Sqlite(db, opts.log, sharedStatements(db));
  }

  /**
   * Appends audit entries to the chain. Call it inside the IMMEDIATE transaction of the
   * write they describe: the write lock, taken before the head is read, is what keeps
   * processes from forking the chain, and a rollback takes the entries with the write.
   */
  appendAudit(changes: readonly AuditedChange[]): void {
    if (changes.length === 0) return;
    const inputs = changes.flatMap(auditEntriesFor);
    const head = auditHeadFromRow(this.shared(AUDIT_HEAD).get([])!);
    const { entries, head: next } = chain(head, inputs);
    const insert = this.shared(INSERT_AUDIT);
    for (const e of entries) insert.run(auditValues(e));
    this.shared(MOVE_AUDIT_HEAD).run([next.seq, next.hash]);
  }

  /** Statements in order in one immediate transaction, with the audit entries of what they changed. */
  async auditedAll(steps: readonly Step[], changes: (rows: Row[][]) => AuditedChange[]): Promise<Row[][]> {
    const tx = this.db.transaction((): Row[][] => {
      const rows = steps.map(({ s, params }) => this.shared(s).all(params));
      this.appendAudit(changes(rows));
      return rows;
    });
    return tx.immediate();
  }

  async audited(s: Statement, params: readonly unknown[], changes: (rows: Row[]) => AuditedChange[]): Promise<Row[]> {
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
   * recipient count: `db.transaction()` builds its wrapper functions on every call.
   */
  private recordUnlessOptedOut(
    n: number,
  ): Database.Transaction<(r: DeliveryRecord, optOut: OptOutCheck, audit: AuditContext | undefined) => RecordWrite> {
    let tx = this.insertUnlessOptedOut.get(n);
    if (tx) return tx;
    // One statement, the lookup in the insert's WHERE: one write, not a lookup and a write.
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

  async takeBackApproved(id: string, back: TakeBack, at: number, by?: AuditActor): Promise<boolean> {
    const steps = takeBackSteps(this.ob, id, back, at, by);
    const NOT_TAKEN = new Error('not taken');
    const tx = this.db.transaction((): boolean => {
      const changes: AuditedChange[] = [];
      for (const step of steps) {
        const rows = this.shared(step.s).all(step.params);
        // All or nothing: a step that moved no row rolls back the one before it.
        if (rows.length === 0) throw NOT_TAKEN;
        changes.push(...step.changes(rows));
      }
      this.appendAudit(changes);
      return true;
    });
    try {
      return tx.immediate();
    } catch (err) {
      if (err === NOT_TAKEN) return false;
      throw err;
    }
  }

  override async updateDeliveryStatus(id: string, change: DeliveryStatusChange): Promise<boolean> {
    const tx = this.db.transaction((): boolean => {
      const moved = this.shared(q.UPDATE_DELIVERY_STATUS).run(statusChangeValues(id, change)).changes === 1;
      if (moved) this.appendAudit([{ write: 'receipt', id, change }]);
      return moved;
    });
    return tx.immediate();
  }

  /** Rows as arrays, mapped once (./audit.ts). */
  override auditEntries(query: AuditQuery): Promise<AuditEntry[]> {
    return this.audit.auditEntries(query);
  }

  async findOptedOut(check: OptOutCheck): Promise<string | undefined> {
    return this.firstOptedOut(check);
  }

  firstOptedOut({ via, recipients }: OptOutCheck): string | undefined {
    const lookup = this.statement('SELECT 1 FROM opt_outs WHERE via = ? AND recipient = ?');
    return recipients.find((r) => lookup.get(via, r) !== undefined);
  }

  async knownContacts(via: string, recipients: readonly string[]): Promise<Set<string>> {
    const known = this.statement('SELECT 1 FROM contacts WHERE via = ? AND recipient = ?');
    return new Set(recipients.filter((r) => known.get(via, r) !== undefined));
  }

  async addContacts(via: string, recipients: readonly string[], now: number, client: string | null): Promise<void> {
    const add = this.statement('INSERT INTO contacts (via, recipient, approved_at, client) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING');
    this.db.transaction(() => recipients.forEach((r) => add.run(via, r, now, client)))();
  }

  statement(sql: string): Database.Statement {
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
  const engine = Sqlite.open(opts, (await import('better-sqlite3')).default);
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
