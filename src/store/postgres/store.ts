/**
 * The shared store for replicas: PostgreSQL through a `pg` Pool. Migrations run under an
 * advisory lock so replicas starting together migrate once. Every read-decide-write is one
 * statement (INSERT … ON CONFLICT … WHERE, which re-checks the condition on the locked,
 * latest row) or a transaction serialised by an advisory lock, so it is atomic across
 * processes at READ COMMITTED.
 * What both engines do alike is in ../sql/ (docs/architecture.md, "The store"); this folder
 * holds what differs; ./connection.ts opens the pool.
 */
import type pg from 'pg';
import type { Logger } from '../../core/log.js';
import { StoreError } from '../errors.js';
import { classifyingFaults } from '../faults.js';
import { storeThrough } from '../wrap.js';
import type { AuditedChange } from '../audit.js';
import type { AuditActor, AuditContext } from '../ports/audit.js';
import type { ClaimCompletion } from '../ports/claims.js';
import type { OptOutCheck } from '../ports/contacts.js';
import type { DeliveryDecision, DeliveryRecord, DeliveryStatusChange, RecordWrite } from '../ports/deliveries.js';
import type { OutboxEntry, TakeBack } from '../ports/outbox.js';
import type { Store } from '../types.js';
import type { Statement } from '../sql/dialect.js';
import { DELIVERY_COLUMNS, deliveryValues, WRITTEN, type Row } from '../sql/rows.js';
import { decisionValues, SqlStore, statusChangeValues } from '../sql/shared.js';
import { outboxStatements, outboxValues } from '../sql/outbox.js';
import { ENQUEUE_APPROVED } from '../sql/approval-writes.js';
import { takeBackSteps } from '../sql/take-back.js';
import { sqlAnswers } from '../sql/answers.js';
import { sqlEscalations, type Step } from '../sql/escalations.js';
import * as q from '../sql/statements.js';
import { appendAudit, postgresAudit } from './audit.js';
import { postgresBanners } from './banners.js';
import { postgresClaims } from './claims.js';
import { connectPool, postgresDialect, withClient, type PostgresStoreOptions } from './connection.js';
import { postgresCounters } from './counters.js';
import { prepared, type PgEngine } from './engine.js';
import { postgresOutbox } from './outbox.js';
import { postgresReceipts } from './receipts.js';

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

const OPTED_OUT = prepared('opted-out', 'SELECT recipient FROM opt_outs WHERE via = $1 AND recipient = ANY($2::text[]) LIMIT 1');

/** The store as opened: the contract, and the pool for tests and tools. */
export type PostgresStore = Store & { readonly pool: pg.Pool };

/**
 * The engine: what the two engines share (../sql/shared.ts), the writes whose transaction
 * is this file's (the record, the approval, a receipt's status), and one factory per
 * aggregate for the rest (./claims.ts, ./outbox.ts, ./receipts.ts, ./counters.ts,
 * ./banners.ts, ./audit.ts), each method delegated by name.
 */
class PostgresEngine extends SqlStore implements Store, PgEngine {
  // `-` takes a key out of an object only: a JSON null (a record without approval) stays as it is.
  protected readonly listings = q.findListings('postgres', {
    payload: 'payload::text',
    withoutCall: "CASE WHEN json_typeof(approval) = 'object' THEN (approval::jsonb - 'call')::json ELSE approval END",
  });

  readonly kind = 'postgres';

  private readonly claims = postgresClaims(this);
  readonly claimIdempotency = this.claims.claimIdempotency;
  readonly answerApproval = this.claims.answerApproval;
  private readonly outbox = postgresOutbox(this);
  readonly claimDue = this.outbox.claimDue;
  readonly recordReleases = this.outbox.recordReleases;
  private readonly receipts = postgresReceipts(this);
  readonly holdReceipt = this.receipts.holdReceipt;
  readonly settleHeldReceipts = this.receipts.settleHeldReceipts;
  private readonly counters = postgresCounters(this);
  readonly chargeCaps = this.counters.chargeCaps;
  readonly admitRate = this.counters.admitRate;
  private readonly banners = postgresBanners(this);
  readonly insertBanner = this.banners.insertBanner;
  readonly listBanners = this.banners.listBanners;
  private readonly answers = sqlAnswers(
    'postgres',
    this.sql,
    (steps, c) => this.auditedAll(steps, c),
    (p) => `SELECT json_array_elements_text(${p}::json)`,
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
  private readonly audit = postgresAudit(this);
  readonly auditLines = this.audit.auditLines;
  readonly pruneAudit = this.audit.pruneAudit;

  private constructor(
    readonly pool: pg.Pool,
    readonly log: Logger,
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
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
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

  /** ./audit.ts's appendAudit, for the aggregates' writes: call it last in the write's transaction. */
  appendAudit(client: pg.PoolClient, changes: readonly AuditedChange[]): Promise<void> {
    return appendAudit(client, changes);
  }

  /** Statements in order in one transaction, with the audit entries of what they changed. */
  async auditedAll(steps: readonly Step[], changes: (rows: Row[][]) => AuditedChange[]): Promise<Row[][]> {
    return this.transaction(async (client) => {
      const out: Row[][] = [];
      for (const { s, params } of steps) out.push((await client.query({ ...s, values: params as unknown[] })).rows as Row[]);
      await this.appendAudit(client, changes(out));
      return out;
    });
  }

  async audited(s: Statement, params: readonly unknown[], changes: (rows: Row[]) => AuditedChange[]): Promise<Row[]> {
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

  async takeBackApproved(id: string, back: TakeBack, at: number, by?: AuditActor): Promise<boolean> {
    const NOT_TAKEN = Symbol('not taken');
    const steps = takeBackSteps(this.ob, id, back, at, by);
    return this.transaction(async (client) => {
      const changes: AuditedChange[] = [];
      for (const step of steps) {
        const { rows } = await client.query({ ...step.s, values: step.params as unknown[] });
        // All or nothing: a step that moved no row rolls back the one before it.
        if (rows.length === 0) throw NOT_TAKEN;
        changes.push(...step.changes(rows as Row[]));
      }
      await this.appendAudit(client, changes);
      return true;
    }).catch((err: unknown) => {
      if (err === NOT_TAKEN) return false;
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

  async findOptedOut({ via, recipients }: OptOutCheck): Promise<string | undefined> {
    const { rows } = await this.pool.query({ ...OPTED_OUT, values: [via, recipients] });
    const recipient = (rows[0] as Row | undefined)?.recipient;
    return typeof recipient === 'string' ? recipient : undefined;
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
