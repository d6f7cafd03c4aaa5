/**
 * The outbox port: sends waiting (scheduled, held by quiet hours or a person's approval),
 * claimed by one process when due, and ended with their outcome.
 */
import type { AuditActor, AuditContext } from './audit.js';
import type { DeliveryAmendment, DeliveryDecision, DeliveryQuery, DeliveryRecord, HeldRevision, RecordWrite } from './deliveries.js';
import type { OptOutCheck } from './contacts.js';
import type { QuestionRecord, QuestionToken } from './answers.js';

/** A released dry run's record, written with the end of its release (Store.recordReleases). */
export interface ReleaseRecord {
  /** The outbox entry. */
  id: string;
  record: DeliveryRecord;
  /** What the release answered, kept as the entry's outcome. */
  outcome: unknown;
  audit?: AuditContext;
  /** Looked up in the same transaction: an opted-out recipient is answered, and nothing is written. */
  optOut?: OptOutCheck;
}

/**
 * Where a waiting send stands in the outbox: `scheduled` (send_at) or `held` (quiet hours, or
 * a person's approval) until due; `releasing` while one process sends it; then `released` (its
 * delivery record is the truth from there), `failed` (refused at release: nothing sent),
 * `unknown` (the release may have sent it), or `cancelled`/`expired` (never sent).
 */
export type OutboxState = 'scheduled' | 'held' | 'releasing' | 'released' | 'failed' | 'unknown' | 'cancelled' | 'expired';

export interface OutboxEntry {
  /** The notification id it will be sent under. */
  id: string;
  via: string;
  client: string | null;
  /** The validated call, without send_at, urgent and idempotency_key. */
  call: Record<string, unknown>;
  state: OutboxState;
  /** What the caller asked for (null: held by quiet hours alone). */
  send_at: number | null;
  /** When it may leave: send_at, or the end of the quiet window. */
  due_at: number;
  created_at: number;
  owner: string | null;
  claimed_at: number | null;
  finished_at: number | null;
  /** The send's result or error body, once finished. */
  outcome: unknown;
  /** The caller's scoped idempotency key and payload hash, when it gave a key. */
  idem_key: string | null;
  payload_hash: string | null;
  /** When a release of it first met a congested provider and was held for a backoff; null while none has. */
  congested_since: number | null;
  /** A send a person approved in the console: the payload hash they approved. Its release sends its row's payload; `call` is empty. */
  approved_sha256?: string;
  /** An escalation step: the first send it escalates. Claimed only while that send's question is unanswered. */
  escalates?: string;
}

/** A new waiting entry: what it is and when it is due, not yet claimed, without a key unless given. */
export function waitingEntry(
  e: Pick<OutboxEntry, 'id' | 'via' | 'client' | 'call' | 'state' | 'send_at' | 'due_at' | 'created_at'> &
    Partial<Pick<OutboxEntry, 'idem_key' | 'payload_hash' | 'approved_sha256' | 'escalates'>>,
): OutboxEntry {
  return {
    idem_key: null,
    payload_hash: null,
    ...e,
    owner: null,
    claimed_at: null,
    finished_at: null,
    outcome: null,
    congested_since: null,
  };
}

/** What claiming due sends gives: those to send now (state `releasing`, owned by the caller), and those too late (`expired`). */
export interface DueClaim {
  due: OutboxEntry[];
  expired: OutboxEntry[];
  /** Escalation steps whose first send was answered before they were claimed: `cancelled` by the claim (present when any). */
  cancelled?: OutboxEntry[];
}

export interface DueClaimOptions {
  /** At most this many, oldest due first. */
  limit: number;
  /** The claimer's token: its finishing write is fenced by it. */
  owner: string;
  /** A release claimed longer ago than this was left by a process that died: it is claimed again. */
  leaseMs: number;
  /** Due longer ago than this (and never claimed): expired instead of sent. */
  graceMs: number;
  /** Only this entry (a held send released on its own, e.g. once approved). */
  id?: string;
}

export interface OutboxPort {
  /**
   * An approval: the decision's compare-and-set and, only if it won, `release` put in the
   * outbox, in one transaction. The approved send then waits durably: whichever process
   * releases it (this one at once, or any replica's release loop after a crash) sends it
   * once. False when nothing was written (someone else decided first).
   */
  approveDelivery(id: string, decision: DeliveryDecision, release: OutboxEntry): Promise<boolean>;
  /**
   * Takes an approved send back before its release, in one transaction: its entry from waiting
   * to `cancelled`, and its row from `approved` to what `back` says. False, nothing written,
   * when either has moved on (its release claimed it first, or another change came first).
   */
  takeBackApproved(id: string, back: TakeBack, at: number, by?: AuditActor): Promise<boolean>;
  /** An edit of a send waiting in the outbox (`scheduled`, `held`): its call replaced, only while it waits. False otherwise. */
  editWaiting(id: string, call: Record<string, unknown>, at: number): Promise<boolean>;
  /**
   * Puts a waiting send in the outbox. With an `idem_key` that another entry already holds,
   * nothing is written and that entry is returned (`existing`), so a keyed scheduling replays.
   */
  scheduleSend(entry: OutboxEntry, audit?: AuditContext): Promise<{ kind: 'scheduled' } | { kind: 'existing'; entry: OutboxEntry }>;
  /**
   * Claims what is due at `now`, in one statement (PostgreSQL, `FOR UPDATE SKIP LOCKED`) or
   * one immediate transaction (SQLite): each entry goes to exactly one caller across every
   * process on the store. Entries due longer than `graceMs` ago become `expired` instead, and
   * escalation steps whose first send's question is answered `cancelled`, read in the same
   * statement or transaction: of an answer and a claim racing, exactly one wins.
   */
  claimDue(now: number, opts: DueClaimOptions): Promise<DueClaim>;
  /**
   * Ends `owner`'s releases whose send is their record (dry runs), in one transaction: each
   * record (with its audit entries) is written only where `owner` still holds the release,
   * which ends `released` with its outcome in the same write. One answer per item, in order:
   * `claim_lost` when another process took the release over (nothing written for it).
   */
  recordReleases(owner: string, items: readonly ReleaseRecord[], now: number): Promise<RecordWrite[]>;
  /** Ends `owner`'s release of `id` in `state` with `outcome`. False (nothing written) when `owner` no longer holds it. */
  finishRelease(id: string, owner: string, state: OutboxState, outcome: unknown, now: number): Promise<boolean>;
  /**
   * Puts `owner`'s release of `id` back to waiting (`held`), due at `dueAt` (a cap that
   * resets then, quiet hours that end then, or a congested provider's backoff: `congested`,
   * which sets `congested_since` unless it was set). False (nothing written) when `owner`
   * no longer holds it.
   */
  holdRelease(id: string, owner: string, dueAt: number, now: number, congested?: boolean): Promise<boolean>;
  /**
   * Moves a waiting entry (a state of `from`) to `to` in one statement: of a cancel and a
   * release racing, exactly one wins. The entry as it is after the call, and whether this
   * call moved it; null when there is no such entry.
   */
  moveWaiting(
    id: string,
    from: readonly OutboxState[],
    to: OutboxState,
    now: number,
    by?: AuditActor,
  ): Promise<{ entry: OutboxEntry; moved: boolean } | null>;
  getOutboxEntry(id: string): Promise<OutboxEntry | null>;
  /** The steps escalating `rootId`, in due order, whatever their state. */
  escalationSteps(rootId: string): Promise<OutboxEntry[]>;
  /**
   * Keeps an escalation's steps (each under its own key: one kept already stays as it is) and
   * their answer tokens, pointing at `question` (kept if it is not yet), in one transaction:
   * all or none. The ids of the steps this call added.
   */
  scheduleEscalation(
    question: Omit<QuestionRecord, 'answer'>,
    tokens: readonly QuestionToken[],
    steps: readonly OutboxEntry[],
  ): Promise<string[]>;
  /** Cancels the steps of `rootId` still waiting, in one statement (a retract, the console's Stop): their ids. */
  cancelEscalation(rootId: string, now: number, by?: AuditActor): Promise<string[]>;
  /** Entries in `states`, soonest due first. */
  listOutbox(states: readonly OutboxState[], limit: number): Promise<OutboxEntry[]>;
  /**
   * The earliest time an entry in `states` may be claimed, or null: its due time; for an
   * escalation step whose first send is still in flight, no sooner than `leaseMs` after it was
   * kept (its process wakes its own release when the first send ends); none for a step whose
   * first send awaits approval.
   */
  nextDue(states: readonly OutboxState[], leaseMs: number): Promise<number | null>;
  /** When the oldest release under way was claimed (its lease ends a lease later), or null when none is. */
  oldestRelease(): Promise<number | null>;
  /**
   * Outbox entries with no delivery record (waiting, or cancelled or expired before a send),
   * newest first, by the delivery query's filters (`status` is the entry's state); `before`
   * pages: entries created before `before.at`, or at it with an id before `before.id`.
   */
  findUnrecordedOutbox(
    query: Omit<DeliveryQuery, 'status' | 'after'> & { state?: OutboxState; before?: { at: number; id: string | null } },
  ): Promise<OutboxEntry[]>;
}

/** What becomes of an approved send's row when it is taken back: asked again with a new payload (an edit), or withdrawn (a retract). */
export type TakeBack = { revise: Omit<HeldRevision, 'from'> } | { amend: Omit<DeliveryAmendment, 'from'> };
