/**
 * The deliveries port: the delivery log (one record per send, its status moved on by
 * receipts, edits, retractions and a person's decision) and the receipts held until their
 * record lands.
 */
import type { AuditActor, AuditContext } from './audit.js';
import type { ClaimCompletion } from './claims.js';
import type { OptOutCheck } from './contacts.js';

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
  /** sent, transient, rate_limited, rejected, opted_out, unknown, dropped or cancelled */
  outcome: string;
  vendor_code?: string | number;
  latency_ms: number;
  /** When the call started (epoch ms); absent on records written before attempts were timed. */
  at?: number;
  /**
   * Where it went: an SMTP relay (host:port, never credentials), a Twilio sender, a webhook
   * target. A failover's every endpoint is an attempt of its own. Absent where the provider
   * names none (Slack), and on records written before attempts named them.
   */
  endpoint?: string;
  /**
   * SHA-256 of what this attempt handed its provider, when that is not the recorded payload
   * (a later Twilio sender, a webhook target's own request); absent: the payload's digest.
   * Its audit `request` entry carries it (src/store/audit.ts).
   */
  digest?: string;
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

export type RecordWrite = { kind: 'written' } | { kind: 'opted_out'; recipient: string } | { kind: 'claim_lost' };

export interface DeliveriesPort {
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
   * Writes the outcome of an approved send's provider call onto its row (status, provider
   * id and status, attempts, error, latency), only while the row is `approved`: false otherwise.
   */
  recordRelease(record: DeliveryRecord): Promise<boolean>;
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
}
