/**
 * The outbox's and the caps' statements and rows, shared by both engines. A list of states
 * travels as one JSON text parameter; each engine says how SQL reads it (`states`).
 */
import type { CapCounter, OutboxEntry, OutboxState } from '../types.js';
import { statement, type Statement } from './dialect.js';
import { num, numOrNull, type Row } from './rows.js';

export const OUTBOX_COLUMNS = [
  'id',
  'via',
  'client',
  'call',
  'state',
  'send_at',
  'due_at',
  'created_at',
  'owner',
  'claimed_at',
  'finished_at',
  'outcome',
  'idem_key',
  'payload_hash',
  'congested_since',
  'escalates',
] as const;

/**
 * SQL true for an escalation step of `table` that must never leave: its first send's question
 * is answered, or the first send ended without leaving (declined or expired unapproved,
 * retracted, failed without the provider ever taking it; or cancelled, expired or refused in
 * the outbox). A first send failed by a receipt after its provider took it escalates on. Read
 * by each engine's claim of due sends in its own statement (PostgreSQL) or transaction
 * (SQLite), which cancels the step.
 */
export const rootAnswered = (table: string): string =>
  `(${table}.escalates IS NOT NULL AND (
     EXISTS (SELECT 1 FROM questions q WHERE q.notification_id = ${table}.escalates AND q.answered_at IS NOT NULL)
     OR EXISTS (SELECT 1 FROM deliveries d WHERE d.id = ${table}.escalates AND d.status IN ('declined', 'expired', 'retracted'))
     OR EXISTS (SELECT 1 FROM deliveries d WHERE d.id = ${table}.escalates AND d.status = 'failed' AND d.provider_message_id IS NULL)
     OR EXISTS (SELECT 1 FROM outbox r WHERE r.id = ${table}.escalates AND r.state IN ('cancelled', 'expired', 'failed'))))`;

/** SQL true for a step of `table` whose first send awaits a person's approval (steps kept by an earlier version at the call). */
const rootPending = (table: string): string =>
  `EXISTS (SELECT 1 FROM deliveries d WHERE d.id = ${table}.escalates AND d.status = 'pending_approval')`;

/**
 * SQL true for a step of `table` whose first send is still in flight: no record yet (an
 * approved send's row says `approved` until its release records it), and its outbox entry (if
 * any) not ended.
 */
const rootInFlight = (table: string): string =>
  `(NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = ${table}.escalates AND d.status <> 'approved')
    AND NOT EXISTS (SELECT 1 FROM outbox r WHERE r.id = ${table}.escalates AND r.state NOT IN ('scheduled', 'held', 'releasing')))`;

/**
 * SQL true for an escalation step of `table` not to be claimed yet, however due: its first
 * send awaits approval, or is still in flight (its steps are kept just before its provider
 * call), so a step never leaves before the first send's outcome is known, and one whose
 * first send failed at the call is cancelled instead. Past a lease from when the steps were
 * kept (`leaseStart`, SQL), a first send still without a record died with its process: the
 * steps go on, as for one that may have left.
 */
export const rootNotYet = (table: string, leaseStart: string): string =>
  `(${table}.escalates IS NOT NULL AND (${rootPending(table)} OR (${table}.created_at > ${leaseStart} AND ${rootInFlight(table)})))`;

/**
 * How an approved send's entry keeps its hash: in the call column, under a key no channel's
 * call can have, so the table needs no column of its own. Read back as `approved_sha256`.
 */
const APPROVED_KEY = '$approved';

/** The call column's value of entry `e`: its call, or an approved send's hash. */
export function storedCall(e: Pick<OutboxEntry, 'call' | 'approved_sha256'>): Record<string, unknown> {
  return e.approved_sha256 === undefined ? e.call : { [APPROVED_KEY]: e.approved_sha256 };
}

export function outboxValues(e: OutboxEntry): unknown[] {
  return OUTBOX_COLUMNS.map((c) =>
    c === 'call'
      ? JSON.stringify(storedCall(e))
      : c === 'outcome'
        ? e[c] === null || e[c] === undefined
          ? null
          : JSON.stringify(e[c])
        : (e[c] ?? null),
  );
}

export function outboxFromRow(r: Row): OutboxEntry {
  const call = JSON.parse(r.call as string) as Record<string, unknown>;
  const approved = call[APPROVED_KEY];
  return {
    id: r.id as string,
    via: r.via as string,
    client: (r.client as string | null) ?? null,
    ...(typeof approved === 'string' ? { call: {}, approved_sha256: approved } : { call }),
    state: r.state as OutboxState,
    send_at: numOrNull(r.send_at),
    due_at: num(r.due_at),
    created_at: num(r.created_at),
    owner: (r.owner as string | null) ?? null,
    claimed_at: numOrNull(r.claimed_at),
    finished_at: numOrNull(r.finished_at),
    outcome: r.outcome === null || r.outcome === undefined ? null : (JSON.parse(r.outcome as string) as unknown),
    idem_key: (r.idem_key as string | null) ?? null,
    payload_hash: (r.payload_hash as string | null) ?? null,
    congested_since: numOrNull(r.congested_since),
    ...(typeof r.escalates === 'string' ? { escalates: r.escalates } : {}),
  };
}

/** A new entry, or nothing when its key is taken (an entry without a key always goes in): its id when it went in. */
export const OUTBOX_INSERT = `INSERT INTO outbox (${OUTBOX_COLUMNS.join(', ')}) VALUES (${OUTBOX_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (idem_key) DO NOTHING RETURNING id`;

export const capCounterFromRow = (r: Row): CapCounter => ({ key: r.key as string, used: num(r.used), resets_at: num(r.resets_at) });

export interface OutboxStatements {
  insert: Statement;
  byId: Statement;
  byKey: Statement;
  finish: Statement;
  hold: Statement;
  move: Statement;
  list: Statement;
  nextDue: Statement;
  oldestRelease: Statement;
  capCounters: Statement;
}

/** `states(p)`: SQL that reads parameter `p` (a JSON array of text) as a set, for `IN`. */
export function outboxStatements(engine: string, states: (p: string) => string): OutboxStatements {
  const s = (name: string, text: string) => statement(`${engine}-${name}`, text);
  return {
    insert: s('outbox-insert', OUTBOX_INSERT),
    byId: s('outbox-by-id', 'SELECT * FROM outbox WHERE id = $1'),
    byKey: s('outbox-by-key', 'SELECT * FROM outbox WHERE idem_key = $1'),
    // Fenced: a release taken over by another process (its lease ran out) changes nothing.
    finish: s(
      'outbox-finish',
      `UPDATE outbox SET state = $1, outcome = $2, finished_at = $3 WHERE id = $4 AND owner = $5 AND state = 'releasing' RETURNING id, client`,
    ),
    // Fenced like the finish: back to waiting, due at $1, for any process to claim then;
    // $4, when not NULL, is when congestion held it, kept from its first time.
    hold: s(
      'outbox-hold',
      `UPDATE outbox SET state = 'held', due_at = $1, owner = NULL, claimed_at = NULL, congested_since = COALESCE(congested_since, $4) WHERE id = $2 AND owner = $3 AND state = 'releasing' RETURNING id, client`,
    ),
    // One statement: a release claiming the same row in between finds it moved, or this finds it claimed.
    move: s(
      'outbox-move',
      `UPDATE outbox SET state = $1, finished_at = $2 WHERE id = $3 AND state IN (${states('$4')}) RETURNING id, client`,
    ),
    list: s('outbox-list', `SELECT * FROM outbox WHERE state IN (${states('$1')}) ORDER BY due_at, id LIMIT $2`),
    // A step waits for its first send (rootNotYet): due, for a timer, when it may be claimed ($2: the lease).
    nextDue: s(
      'outbox-next-due',
      `SELECT MIN(due) AS due FROM (
         SELECT MIN(due_at) AS due FROM outbox WHERE state IN (${states('$1')}) AND escalates IS NULL
         UNION ALL
         SELECT MIN(CASE WHEN ${rootPending('outbox')} THEN NULL
                         WHEN created_at + $2 > due_at AND ${rootInFlight('outbox')} THEN created_at + $2
                         ELSE due_at END) AS due
         FROM outbox WHERE state IN (${states('$1')}) AND escalates IS NOT NULL) AS n`,
    ),
    oldestRelease: s('outbox-oldest-release', `SELECT MIN(claimed_at) AS claimed FROM outbox WHERE state = 'releasing'`),
    capCounters: s('cap-counters', 'SELECT key, used, resets_at FROM cap_counters WHERE resets_at > $1 ORDER BY key'),
  };
}
