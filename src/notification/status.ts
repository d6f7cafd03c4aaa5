/**
 * The one place a notification's state changes after its send: a provider receipt moves it
 * forward, never back, and a caller's edit or retraction (edit_notification,
 * retract_notification) moves it where this table says. Pure; docs/tools.md's transition
 * table is this table in words.
 */
import { RECEIPT_EVENTS, type DeliveryStatus, type ReceiptEvent } from '../store/ports/deliveries.js';

/** What a caller does to a notification it sent: the events besides receipts. */
export type CallerAction = 'edited' | 'retracted';

/**
 * What moves a send that waits in the outbox (src/notification/outbox.ts): its release at the
 * due time (where its send's own outcome takes over: `sent`, `failed`, `unknown`…), a
 * retract (`cancel`), or a restart that finds it due longer ago than the grace (`expire`).
 */
export const WAIT_EVENTS = ['release', 'cancel', 'expire'] as const;
export type WaitEvent = (typeof WAIT_EVENTS)[number];

/** Never sent, and never to be: receipts do not apply. */
const NEVER_SENT = new Set<DeliveryStatus>([
  'dry_run',
  'scheduled',
  'held',
  'cancelled',
  'expired',
  'pending_approval',
  'approved',
  'declined',
]);

/**
 * For each state, the receipts and outbox events it takes and where each leads. A state not listed for a
 * receipt refuses it: `dry_run` was never sent, `delivered`, `undelivered` and `failed` are
 * final, and `sent` does not go back to `queued`. `unknown` (the send's outcome was lost)
 * takes any receipt: the provider knows better than we do. A receipt that repeats the
 * current state is taken (its provider status may be newer) but changes no state. A caller
 * edits a post that stands (`sent`; a dry run's record, which stays a dry run) and retracts
 * it (`retracted`, final); whether its channel can do either is the channel's to say.
 */
const TRANSITIONS: Readonly<Record<DeliveryStatus, Readonly<Partial<Record<ReceiptEvent | WaitEvent | CallerAction, DeliveryStatus>>>>> = {
  dry_run: { edited: 'dry_run', retracted: 'retracted' },
  scheduled: { release: 'sent', cancel: 'cancelled', expire: 'expired' },
  held: { release: 'sent', cancel: 'cancelled', expire: 'expired' },
  cancelled: {},
  expired: {},
  unknown: { queued: 'queued', sent: 'sent', delivered: 'delivered', undelivered: 'undelivered', failed: 'failed' },
  queued: { queued: 'queued', sent: 'sent', delivered: 'delivered', undelivered: 'undelivered', failed: 'failed' },
  sent: { sent: 'sent', delivered: 'delivered', undelivered: 'undelivered', failed: 'failed', edited: 'sent', retracted: 'retracted' },
  delivered: {},
  undelivered: {},
  failed: {},
  retracted: {},
  // Held for a person: nothing was sent, so no provider has anything to report yet; the caller may still take it back.
  pending_approval: { retracted: 'cancelled' },
  // Approved but still in the outbox (its release did not happen: a process died): an operator's retract of the entry cancels it.
  approved: { retracted: 'cancelled' },
  declined: {},
};

/** What a person (or the clock) decides about a send held for the console. */
export type Decision = 'approve' | 'decline' | 'expire';

/**
 * The decisions on a held send, in the same one table as the receipts: only
 * `pending_approval` takes one; `approved` then leaves through the send path, and its
 * provider's answer writes `sent`, `failed` or `unknown`.
 */
const DECISIONS: Readonly<Partial<Record<DeliveryStatus, Readonly<Record<Decision, DeliveryStatus>>>>> = {
  pending_approval: { approve: 'approved', decline: 'declined', expire: 'expired' },
};

/** Where `decision` takes a send in `current`, or why it cannot. */
export function decide(current: DeliveryStatus, decision: Decision): Advance {
  const next = DECISIONS[current]?.[decision];
  if (next !== undefined) return { ok: true, next };
  return { ok: false, reason: current === 'approved' ? 'it was approved already' : `it is ${current}, not waiting for approval` };
}

export type Advance = { ok: true; next: DeliveryStatus } | { ok: false; reason: string };

/** Where a receipt or a caller's action `event` takes a notification in `current`, or why it is refused. */
export function advance(current: DeliveryStatus, event: ReceiptEvent | CallerAction): Advance {
  const next = TRANSITIONS[current][event];
  if (next !== undefined) return { ok: true, next };
  if (Object.keys(TRANSITIONS[current]).every((e) => !(RECEIPT_EVENTS as readonly string[]).includes(e)) && !NEVER_SENT.has(current)) {
    return { ok: false, reason: `${current} is final` };
  }
  if (current === 'dry_run') return { ok: false, reason: 'a dry run was never sent' };
  if (NEVER_SENT.has(current)) return { ok: false, reason: `${current}: it was never sent` };
  return { ok: false, reason: `${current} does not go back to ${event}` };
}

/** The states an outbox event moves a send from, read off the table (the store's conditional writes use them). */
export function statesTaking(event: WaitEvent): Array<'scheduled' | 'held'> {
  return (Object.keys(TRANSITIONS) as DeliveryStatus[]).filter((s) => TRANSITIONS[s][event] !== undefined) as Array<'scheduled' | 'held'>;
}

/** What each state tells a caller; `sent` is the channel's own sentence (its module declares it). */
export const STATE_MEANINGS: Readonly<Record<Exclude<DeliveryStatus, 'sent'>, string>> = {
  dry_run: 'Recorded only: the channel has no credentials, so nothing was sent.',
  queued: 'The provider holds the message in its queue and has not handed it on yet.',
  delivered: 'The provider reports the message delivered to the recipient.',
  undelivered:
    'The provider could not deliver the message (provider_status has its code); resending to the same recipient will likely fail again.',
  failed: 'The message was not sent: the provider refused it or the send failed (error_code or provider_status says why).',
  scheduled: 'Waiting in the store for its send_at; it is sent then (retract_notification cancels it until it leaves).',
  held: 'Held by quiet hours, a cap reached at its release (or for approval) until release_at; it is sent then (retract_notification cancels it until it leaves).',
  cancelled: 'Taken back before it was sent; nothing was sent.',
  expired:
    'Not sent: its time passed unanswered (a console approval past NOTIFY_APPROVAL_TTL_S), or while no server could send it (scheduled or approved) longer ago than NOTIFY_SCHEDULE_GRACE_S.',
  pending_approval:
    'Held for a person to approve or decline in the operator console; nothing has been sent. It expires unanswered after NOTIFY_APPROVAL_TTL_S.',
  approved: 'A person approved it in the operator console; it is leaving through the send path now.',
  declined: 'A person declined it in the operator console; nothing was sent. Do not resend it unchanged.',
  retracted: 'The caller took the message back: the Slack post was deleted (or, in a dry run, its record withdrawn).',
  unknown:
    'The outcome was lost after the request left (a timeout or reset): the provider may have sent it. Do not resend blindly; a provider receipt may still settle it.',
};
