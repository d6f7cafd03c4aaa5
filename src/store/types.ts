/**
 * The store contract. Two implementations pass one shared suite (test/store/suite.ts):
 * SQLite (default) and PostgreSQL (when DATABASE_URL is set, so replicas share state).
 * All times are epoch milliseconds; all methods are safe to call from several processes.
 */

/**
 * Where a notification stands. The send writes `dry_run`, `sent`, `failed` or `unknown` (the
 * provider may have sent it); provider receipts move it on, never back: the transitions are
 * src/notification/status.ts's alone.
 */
export const NOTIFICATION_STATES = [
  'dry_run',
  'queued',
  'sent',
  'delivered',
  'failed',
  'undelivered',
  'unknown',
  'scheduled',
  'held',
  'cancelled',
  'expired',
  // A send held for a person's decision in the console (NOTIFY_APPROVAL_MODE=console), and where that decision took it.
  'pending_approval',
  'approved',
  'declined',
  'retracted',
] as const;
export type DeliveryStatus = (typeof NOTIFICATION_STATES)[number];

/** What a provider receipt can report, in this server's words (each channel maps its vendor's statuses to these). */
export const RECEIPT_EVENTS = ['queued', 'sent', 'delivered', 'undelivered', 'failed'] as const;
export type ReceiptEvent = (typeof RECEIPT_EVENTS)[number];

/** One provider call of a send, as the delivery log keeps it (no payload, no vendor message). */
export interface DeliveryAttempt {
  attempt: number;
  /** sent, transient, rate_limited, rejected, opted_out or unknown */
  outcome: string;
  vendor_code?: string | number;
  latency_ms: number;
  /** When the call started (epoch ms); absent on records written before attempts were timed. */
  at?: number;
}

export interface DeliveryRecord {
  /** `ntf_…` */
  id: string;
  via: string;
  status: DeliveryStatus;
  provider: string;
  provider_message_id: string | null;
  /** Where the provider put the message, when it says (Slack: the channel ID a post went to, whatever `channel` named). */
  provider_conversation?: string | null;
  /** The exact provider payload (for email, `{ envelope, messageId, raw }` with the full MIME). */
  payload: unknown;
  error_code: string | null;
  attempts: number;
  /** Every provider call, in order; empty for a dry run. */
  attempt_log: DeliveryAttempt[];
  latency_ms: number;
  /** Authenticated client name (HTTP tokens) or clientInfo.name, when known. */
  client: string | null;
  idempotency_key: string | null;
  created_at: number;
  /** The provider's own word for the message, last heard (Twilio `delivered`, `queued`…), and its error code. */
  provider_status: string | null;
  provider_status_code: string | null;
  /** When `status` or `provider_status` last changed. */
  status_updated_at: number;
  /** What a person was asked and answered, when the operator's approval policy applied to this send. */
  approval?: ApprovalRecord | null;
}

/** A caller's change to what it sent (edit_notification, retract_notification), applied only while the delivery is still in `from`. */
export interface DeliveryAmendment {
  from: DeliveryStatus;
  status: DeliveryStatus;
  /** The payload as it now stands at the provider (the edited message; the post as it was, when retracted). */
  payload: unknown;
  /** What happened, in the provider's words of this server: `edited`, `deleted`. */
  provider_status: string;
  at: number;
  /** Who made the change, for its audit entry (absent: the notification's own client). */
  by?: AuditActor;
}

/** A receipt's change to a delivery, applied only while the delivery is still in `from`. */
export interface DeliveryStatusChange {
  from: DeliveryStatus;
  status: DeliveryStatus;
  provider_status: string;
  provider_status_code: string | null;
  at: number;
  /** Set only where the delivery has none yet (its send's answer was lost): later receipts then find it. */
  provider_message_id?: string;
}

/**
 * A verified provider receipt that arrived before its delivery was recorded, held until the
 * record lands (src/notification/status-receipt.ts applies it then).
 */
export interface HeldReceipt {
  via: string;
  provider_message_id: string;
  /** Our id, when the provider echoed it back (the callback URL carries it); a record without the provider's id is found by it. */
  notification_id: string | null;
  event: ReceiptEvent;
  provider_status: string;
  provider_status_code: string | null;
  received_at: number;
}

/**
 * Bounds on held receipts: older than `maxAgeMs` they are purged; at `maxRows` live rows, or
 * `maxPerMessage` for its message, a new one is refused.
 */
export interface HeldReceiptBounds {
  now: number;
  maxAgeMs: number;
  maxRows: number;
  maxPerMessage: number;
}

export type TakenReceipt = HeldReceipt & { seq: number };

/** What settleHeldReceipts' fold makes of a delivery's held receipts: the change to write, and its own answer. */
export interface HeldReceiptSettlement<T> {
  change: DeliveryStatusChange | null;
  result: T;
}

/** The delivery a settlement is for: held receipts match its provider id, or its own id. */
export interface HeldReceiptTarget {
  id: string;
  via: string;
  provider_message_id: string | null;
}

/**
 * A person's part in a send (src/notification/approval.ts): `approved` on the send's own row;
 * `declined` (APPROVAL_DECLINED) and `required` (APPROVAL_REQUIRED: the client could not ask)
 * on a row of their own, with nothing sent.
 */
export interface ApprovalRecord {
  /** `pending` (and `expired`): held for the console, waiting for a person (NOTIFY_APPROVAL_MODE=console). */
  outcome: 'approved' | 'declined' | 'required' | 'pending' | 'expired';
  /** Why approval was needed: the NOTIFY_APPROVAL rules that matched (`first-contact`, `sms`…). */
  reasons: string[];
  /** SHA-256 of the exact provider payload the person saw. */
  payload_sha256: string;
  /** Who decided in the console (the operator token's client), when, and why (their reason, if they gave one). */
  decided_by?: string;
  decided_at?: number;
  reason?: string;
  /** A console approval ends unanswered at this time (epoch ms): then `expired`. */
  expires_at?: number;
  /** A held send's recipients (every one, bcc included), and those that were first contacts: an approval makes them known. */
  recipients?: string[];
  first_contacts?: string[];
  /** A held send's validated call (without its idempotency key), so an edit can change it and build it again. */
  call?: Record<string, unknown>;
}

/** A delivery as a listing reads it (Store.findListings). */
export interface DeliveryListing {
  /** The record; its payload null when cut (see `head`), its approval without `call`, or null when not asked for. */
  record: DeliveryRecord;
  /** A payload's first characters of JSON text, when the whole was larger than asked for; else null. */
  head: string | null;
  /** The payload's whole size in bytes of JSON text (UTF-8). */
  payloadBytes: number;
}

/** What the console's notification list filters by; each absent filter admits all. */
export interface DeliveryQuery {
  status?: DeliveryStatus;
  via?: string;
  client?: string;
  /** created_at at or after (epoch ms). */
  since?: number;
  /** created_at before (epoch ms). */
  until?: number;
  /** Only those listed after this delivery's id, newest first (the next page). */
  after?: string;
  limit: number;
}

/**
 * A console decision on a held send: its status moves from `from` to `status`, carrying the
 * approval as decided, only while the row's payload is still the one `approval.payload_sha256` names.
 */
export interface DeliveryDecision {
  from: DeliveryStatus;
  status: DeliveryStatus;
  approval: ApprovalRecord;
  at: number;
}

/** An edit of a held send: the payload as it now stands and its approval (hash, recipients, call), from `from`. */
export interface HeldRevision {
  from: 'pending_approval' | 'approved';
  payload: unknown;
  approval: ApprovalRecord;
  at: number;
}

/** A person's answer to one approval question. */
export type ApprovalAnswer = 'accept' | 'decline';

/** A recipient a person approved a first contact with, per channel (`notify-mcp contacts`). */
export interface ContactRecord {
  via: string;
  recipient: string;
  approved_at: number;
  /** Who made the send that was approved. */
  client: string | null;
}

/**
 * Where a pending claim stands: `claimed` while its owner has not yet called the provider
 * (it may be taken over, and the taker may send); `sending` from just before the provider
 * call on (a taker must never send: the message may have gone out).
 */
export type IdempotencyPhase = 'claimed' | 'sending';

export type IdempotencyClaim =
  /**
   * This caller owns the key; `owner` fences its later writes. `phase: 'sending'` when it took
   * over a claim whose provider call may have started: it must not send, and
   * `notification_id` (when the row carries one) is the id that call was sending under.
   * Otherwise `notification_id` is the one this claim gave.
   */
  | { kind: 'claimed'; owner: string; phase: IdempotencyPhase; notification_id?: string }
  | { kind: 'existing'; payload_hash: string; state: 'pending'; phase: IdempotencyPhase; claimed_at: number }
  | { kind: 'existing'; payload_hash: string; state: 'done'; result: unknown; claimed_at: number }
  /** A recipient of `opts.optOut` has opted out: nothing was claimed or read. */
  | { kind: 'opted_out'; recipient: string };

/** What a claim checks first, in the same statement: opted-out recipients of channel `via`. */
export interface OptOutCheck {
  via: string;
  recipients: readonly string[];
}

/** An idempotency claim completed by a record write: `owner`'s claim on `key` becomes done with `result`. */
export interface ClaimCompletion {
  key: string;
  owner: string;
  result: unknown;
}

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

export type RecordWrite = { kind: 'written' } | { kind: 'opted_out'; recipient: string } | { kind: 'claim_lost' };

/** One rate-limit window a send counts against: at most `limit` admissions per `windowMs`. */
export interface RateBucket {
  /** Identifies the counter (client, channel, window); shared by every process on the store. */
  key: string;
  limit: number;
  windowMs: number;
}

export type RateDecision =
  | { admitted: true }
  /** Per bucket, in order: ms until it has room again, or null when it has room now. */
  | { admitted: false; waitMs: (number | null)[] };

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
}

/** A new waiting entry: what it is and when it is due, not yet claimed, without a key unless given. */
export function waitingEntry(
  e: Pick<OutboxEntry, 'id' | 'via' | 'client' | 'call' | 'state' | 'send_at' | 'due_at' | 'created_at'> &
    Partial<Pick<OutboxEntry, 'idem_key' | 'payload_hash' | 'approved_sha256'>>,
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
export type DueClaim = { due: OutboxEntry[]; expired: OutboxEntry[] };

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

/** One cap counter a send counts against: `amount` more, refused past `limit`, the period ending at `resets_at`. */
export interface CapCharge {
  key: string;
  limit: number;
  amount: number;
  resets_at: number;
}

export type CapDecision = { admitted: true } | { admitted: false; key: string; used: number; resets_at: number };

export interface CapCounter {
  key: string;
  used: number;
  resets_at: number;
}

export type BannerSeverity = 'info' | 'warning' | 'critical';
export type BannerStatus = 'active' | 'dismissed' | 'expired';

export interface BannerRecord {
  /** `bnr_<uuid>` */
  id: string;
  text: string;
  audience: string;
  severity: BannerSeverity;
  dedupe_key: string | null;
  created_at: number;
  expires_at: number | null;
  dismissed_at: number | null;
}

/* The audit log's entries (DESIGN section 10; the chain itself is ./audit.ts). */

/** What a write tells the audit about itself; the store fills in seq, at, prev and hash. */
export interface AuditInput {
  at: number;
  client: string | null;
  tool: string | null;
  notification_id: string | null;
  /** `request`, `outcome.<status>`, `approval.<outcome>`, `receipt.<status>`, `answer.<accept|decline>`… */
  kind: string;
  /** SHA-256 (hex) of what the entry is about: the exact provider request, the outcome, the change. */
  digest: string;
  /** The recipients' classes (never the addresses); null when the entry has none. */
  recipients: readonly string[] | null;
}

export interface AuditEntry extends AuditInput {
  seq: number;
  /** The hash of the entry before (the anchor's for the first kept one). */
  prev: string;
  hash: string;
}

/**
 * Where the chain stands: its last entry, and the anchor it starts from (seq 0 and the
 * genesis hash until pruning moves it to the last pruned entry).
 */
export interface AuditHead {
  seq: number;
  hash: string;
  anchor_seq: number;
  anchor_hash: string;
}

/** Who made a change an audit entry records: the client (an operator's token client, too) and the tool it came through. */
export interface AuditActor {
  client: string | null;
  tool: string | null;
}

/** A page of the chain for verify's fast read: `n` lines `<hashed JSON> <hash>`, joined by newlines, the last seq `last`. */
export interface AuditLines {
  text: string;
  last: number | null;
  n: number;
}

/** What the send's caller adds to a record write's entries: which tool made it, and its recipients' classes. */
export interface AuditContext {
  tool: string | null;
  recipients?: readonly string[];
}

/** Which audit entries to read, in seq order: after `afterSeq`, at most `limit`, optionally from time `since`, of one client, of one notification. */
export interface AuditQuery {
  afterSeq: number;
  limit: number;
  since?: number;
  client?: string;
  notificationId?: string;
}

export interface Store {
  /** `sqlite` or `postgres`, for logs. */
  readonly kind: string;

  /**
   * The one way a delivery record is written. With `optOut`, nothing is written when a
   * recipient of it has opted out (`opted_out`). With `claim`, the record completes that
   * idempotency claim with its result, both or neither (`claim_lost`: the owner no longer
   * holds it). Each check rides in the write's own statement or transaction, so a send that
   * is only its record (a dry run) costs one round trip.
   */
  writeRecord(record: DeliveryRecord, opts?: { optOut?: OptOutCheck; claim?: ClaimCompletion; audit?: AuditContext }): Promise<RecordWrite>;
  /** Newest first. */
  listDeliveries(limit: number): Promise<DeliveryRecord[]>;
  /** Newest first, filtered (the console's list). */
  findDeliveries(query: DeliveryQuery): Promise<DeliveryRecord[]>;
  /**
   * findDeliveries for a page that lists many, reading no more of each row than it shows: a
   * payload over `payloadChars` bytes of JSON comes as its first characters only (`head`;
   * the record's payload null); the approval only when asked for, without a held send's call.
   */
  findListings(query: DeliveryQuery, opts: { payloadChars: number; approval: boolean }): Promise<DeliveryListing[]>;
  /**
   * Compare-and-set of a decision: writes it only while the delivery is in `decision.from`
   * and its payload hash is the decision's, so of two people (or replicas) deciding one held
   * send exactly one wins, and an edit landing after the decider's read is never decided
   * unseen. False when nothing was written.
   */
  decideDelivery(id: string, decision: DeliveryDecision): Promise<boolean>;
  /**
   * An approval: the decision's compare-and-set and, only if it won, `release` put in the
   * outbox, in one transaction. The approved send then waits durably: whichever process
   * releases it (this one at once, or any replica's release loop after a crash) sends it
   * once. False when nothing was written (someone else decided first).
   */
  approveDelivery(id: string, decision: DeliveryDecision, release: OutboxEntry): Promise<boolean>;
  /**
   * Writes the outcome of an approved send's provider call onto its row (status, provider
   * id and status, attempts, error, latency), only while the row is `approved`: false otherwise.
   */
  recordRelease(record: DeliveryRecord): Promise<boolean>;
  /** An edit of a send waiting in the outbox (`scheduled`, `held`): its call replaced, only while it waits. False otherwise. */
  editWaiting(id: string, call: Record<string, unknown>, at: number): Promise<boolean>;
  /**
   * An edit of a held send (`pending_approval`, or `approved` and not yet released): its
   * payload and approval replaced and the row `pending_approval`, so a person decides on what
   * it now says; only while the row is in `revision.from`. False otherwise.
   */
  reviseHeld(id: string, revision: HeldRevision): Promise<boolean>;
  /** Moves held sends created before `createdBefore` from `pending_approval` to `expired`; how many. */
  expirePending(createdBefore: number, now: number): Promise<number>;
  getDelivery(id: string): Promise<DeliveryRecord | null>;
  /** The delivery of channel `via` the provider knows as `providerMessageId`, if any. */
  findDeliveryByProviderMessage(via: string, providerMessageId: string): Promise<DeliveryRecord | null>;
  /**
   * Compare-and-set: writes `change` only if the delivery's status is still `change.from`, so
   * two receipts racing (two replicas) cannot both move it from the same state. False when
   * nothing was written (another receipt moved it first, or no such delivery).
   */
  updateDeliveryStatus(id: string, change: DeliveryStatusChange): Promise<boolean>;
  /** Compare-and-set like updateDeliveryStatus, for a caller's edit or retraction: the payload changes with the status. */
  amendDelivery(id: string, change: DeliveryAmendment): Promise<boolean>;
  /**
   * Keeps `receipt` for a delivery not recorded yet, unless the bounds refuse it; older ones
   * are purged. A receipt equal to one already held (a provider's resend, or a replay) is
   * that one. Its sequence number (arrival order), or null when refused.
   */
  holdReceipt(receipt: HeldReceipt, bounds: HeldReceiptBounds): Promise<number | null>;
  /**
   * In one transaction: takes every receipt held for `target` (its channel, and its provider
   * id or its own id), oldest first, gives them with the delivery as it is now to `fold`
   * (pure, synchronous), writes the change it returns and deletes them. A crash between
   * leaves them held; of several callers racing (replicas), each held receipt goes to exactly
   * one. Undefined when none is held or the delivery is not recorded.
   */
  settleHeldReceipts<T>(
    target: HeldReceiptTarget,
    fold: (delivery: DeliveryRecord, held: readonly TakenReceipt[]) => HeldReceiptSettlement<T>,
  ): Promise<T | undefined>;

  /**
   * Atomically claims `key` for a send (`claimed`, with a fresh owner token), or reports the
   * existing claim. A pending claim of the same payload older than `staleAfterMs` (its owner
   * died) is taken over and keeps its phase. Claims older than `ttlMs` count as absent.
   * With `optOut`, an opted-out recipient comes first (`opted_out`, nothing claimed): the
   * opt-out lookup rides in the claim's round trip. The row carries `notificationId` from
   * the claim on, except where a taken-over claim keeps `sending` (it keeps the id it was
   * sending under), so a taker can name what may have gone out.
   */
  claimIdempotency(
    key: string,
    payloadHash: string,
    now: number,
    opts: { ttlMs: number; staleAfterMs: number; optOut?: OptOutCheck; notificationId?: string },
  ): Promise<IdempotencyClaim>;
  /**
   * Moves `owner`'s pending claim to `sending`, just before the provider call, with the
   * notification id the call sends under (when given). False when `owner` no longer holds
   * the claim (it was taken over): then it must not send.
   */
  markIdempotencySending(key: string, owner: string, notificationId?: string): Promise<boolean>;
  /** Stores the result of `owner`'s send; later claims see `state: 'done'`. False (nothing written) when `owner` lost the claim. */
  completeIdempotency(key: string, owner: string, result: unknown): Promise<boolean>;
  /** Drops `owner`'s pending claim whose send failed, so that a retry may send. False when `owner` lost the claim. */
  releaseIdempotency(key: string, owner: string): Promise<boolean>;

  /**
   * Admits one event into every bucket, or into none: each bucket is a sliding window over
   * the admissions it let through (the last `windowMs` before `now`), full at `limit`. A
   * refusal writes nothing. Atomic across processes sharing the store.
   */
  admitRate(buckets: readonly RateBucket[], now: number): Promise<RateDecision>;

  /** The first recipient of `check` that has opted out of its channel, if any. */
  findOptedOut(check: OptOutCheck): Promise<string | undefined>;
  addOptOut(via: string, recipient: string, now: number): Promise<void>;

  /**
   * Records `answer` as the answer to approval question `id` unless it has one: of answers
   * racing (a decline and an accept of one question, on any replica), the first stands. The
   * answer that stands, and whether it is this call's (`first`). Forgotten after `ttlMs`.
   */
  answerApproval(id: string, answer: ApprovalAnswer, now: number, ttlMs: number): Promise<{ answer: ApprovalAnswer; first: boolean }>;

  /** The recipients of `recipients` that are known contacts of channel `via` (an approved first contact). */
  knownContacts(via: string, recipients: readonly string[]): Promise<Set<string>>;
  /** Remembers approved first contacts; an existing one keeps its first approval. */
  addContacts(via: string, recipients: readonly string[], now: number, client: string | null): Promise<void>;
  /** Every known contact, by channel and recipient. */
  listContacts(): Promise<ContactRecord[]>;
  /** Forgets one contact: its next send is a first contact again. False when it was not known. */
  forgetContact(via: string, recipient: string): Promise<boolean>;

  /**
   * Inserts `banner`, unless it has a dedupe_key and an active banner (at
   * `banner.created_at`) of the same audience already holds that key: then that banner is
   * returned and nothing is inserted. A dedupe key is scoped to its audience. Atomic across
   * processes, so replicas racing on one key create one banner per audience.
   */
  insertBanner(banner: BannerRecord): Promise<BannerRecord>;
  /** Deletes banners dismissed or expired before `before` (the retention policy); returns how many. */
  purgeBanners(before: number): Promise<number>;
  getBanner(id: string): Promise<BannerRecord | null>;
  /** The active (undismissed, unexpired) banner of `audience` with this dedupe key, if any. */
  findActiveBannerByDedupe(audience: string, dedupeKey: string, now: number): Promise<BannerRecord | null>;
  /** Sets dismissed_at if unset; returns the banner as it is after the call. */
  dismissBanner(id: string, now: number): Promise<BannerRecord | null>;
  /**
   * Dismisses the banner if it is active at `now`, in one statement, so racing callers learn
   * from it alone which of them dismissed it (`dismissed`); then the banner as it is (null:
   * no such banner). A banner not active stays as it was: dismissed already, or expired.
   */
  endBanner(id: string, now: number): Promise<{ banner: BannerRecord; dismissed: boolean } | null>;
  /** Banners for any of `audiences` (all when omitted) in `status` (all when omitted), newest first. */
  listBanners(query: { audiences?: string[]; status?: BannerStatus; now: number; limit?: number }): Promise<BannerRecord[]>;
  /**
   * An opaque token that changes whenever any banner is inserted, updated or deleted, by
   * this process or any other sharing the database. Read it BEFORE the banners it guards:
   * a cache entry filled after reading token T is fresh for as long as the token is T.
   */
  bannersVersion(): Promise<string>;

  /**
   * Puts a waiting send in the outbox. With an `idem_key` that another entry already holds,
   * nothing is written and that entry is returned (`existing`), so a keyed scheduling replays.
   */
  scheduleSend(entry: OutboxEntry, audit?: AuditContext): Promise<{ kind: 'scheduled' } | { kind: 'existing'; entry: OutboxEntry }>;
  /**
   * Claims what is due at `now`, in one statement (PostgreSQL, `FOR UPDATE SKIP LOCKED`) or
   * one immediate transaction (SQLite): each entry goes to exactly one caller across every
   * process on the store. Entries due longer than `graceMs` ago become `expired` instead.
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
  /** Entries in `states`, soonest due first. */
  listOutbox(states: readonly OutboxState[], limit: number): Promise<OutboxEntry[]>;
  /** The earliest due time among entries in `states`, or null. */
  nextDue(states: readonly OutboxState[]): Promise<number | null>;
  /** When the oldest release under way was claimed (its lease ends a lease later), or null when none is. */
  oldestRelease(): Promise<number | null>;

  /**
   * Adds every charge to its counter, or none: a counter whose period ended starts again at
   * zero; one that would pass its limit refuses the whole send (the first such is named).
   * Atomic across processes sharing the store.
   */
  chargeCaps(charges: readonly CapCharge[], now: number): Promise<CapDecision>;
  /** Counters whose period has not ended at `now`. */
  listCapCounters(now: number): Promise<CapCounter[]>;

  /**
   * The audit chain: every write above that the audit covers (records, receipts, approval
   * answers and decisions, outbox moves, edits and retractions) appends its entries in its
   * own transaction (./audit.ts, `auditEntriesFor`, says which). Where the chain stands, and
   * its entries in seq order.
   */
  auditHead(): Promise<AuditHead>;
  auditEntries(query: AuditQuery): Promise<AuditEntry[]>;
  /** Verify's fast read: entries after `afterSeq`, at most `limit`, as lines (AuditLines). */
  auditLines(afterSeq: number, limit: number): Promise<AuditLines>;
  /** One notification's entries, oldest first (the console's notification page). */
  auditFor(notificationId: string, limit?: number): Promise<AuditEntry[]>;
  /**
   * Deletes entries older than `before` (a prefix of the chain), moving the anchor to the
   * last one deleted, so the rest still verifies, and appends a `pruned` entry (at `now`)
   * naming that anchor, in the same transaction; returns how many were deleted.
   */
  pruneAudit(before: number, now: number): Promise<number>;

  /**
   * Outbox entries with no delivery record (waiting, or cancelled or expired before a send),
   * newest first, by the delivery query's filters (`status` is the entry's state); `before`
   * pages: entries created before `before.at`, or at it with an id before `before.id`.
   */
  findUnrecordedOutbox(
    query: Omit<DeliveryQuery, 'status' | 'after'> & { state?: OutboxState; before?: { at: number; id: string | null } },
  ): Promise<OutboxEntry[]>;
  /** Records console session `id` as signed out until `expiresAt` (when its cookie ends anyway); drops those ended by `now`. */
  revokeSession(id: string, expiresAt: number, now: number): Promise<void>;
  sessionRevoked(id: string): Promise<boolean>;

  close(): Promise<void>;
}
