/**
 * A verified provider receipt applied to its notification: found by the provider's message
 * id (or our own, when the send's answer was lost), moved only where advance() allows, and
 * written compare-and-set, so that receipts racing across replicas never move a notification
 * backwards. A receipt that outruns its send's record (an early receipt) is kept until the
 * record lands. (The store and the wire still call these `held`: its table, its methods, and
 * the `held` outcome a webhook answers.)
 */
import type { ReceiptReport } from '../channels/channel.js';
import type { Logger } from '../core/log.js';
import type {
  DeliveriesPort,
  DeliveryRecord,
  DeliveryStatus,
  DeliveryStatusChange,
  HeldReceiptSettlement,
  TakenReceipt,
} from '../store/ports/deliveries.js';
import { advance } from './status.js';

/** `held`: an early receipt, kept until its send's record lands. `unknown_message`: no record, and no room to keep it. */
export type ReceiptOutcome = 'applied' | 'ignored' | 'held' | 'unknown_message';

export interface ReceiptDeps {
  store: DeliveriesPort;
  log: Logger;
  now: () => number;
}

/**
 * A record lands within a send's budget of its receipt; a day covers any clock or queue
 * delay. An older early receipt will never find its record (the send crashed before writing
 * it) and is purged.
 */
export const EARLY_RECEIPT_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/**
 * Only the provider can add rows (receipts are signature-verified), and each leaves as its
 * record lands; the cap bounds the table should records stop landing.
 */
export const EARLY_RECEIPT_MAX_ROWS = 10_000;
/**
 * Distinct early receipts kept for one message: a message has a handful of statuses (Twilio: about
 * ten), and a replayed callback is the row it repeats, so one message cannot take the table.
 */
export const EARLY_RECEIPTS_PER_MESSAGE = 16;
/** Compare-and-set rounds before giving up (each lost round means another receipt moved it). */
const ROUNDS = 5;

const fieldsOf = (via: string, report: ReceiptReport) => ({
  via,
  event: report.event,
  providerStatus: report.providerStatus,
  code: report.code,
});

/**
 * The delivery `report` is about: by the provider's id, or else by our own id when the
 * callback carried it (signed with its URL) and the record has no provider id yet (its send's
 * answer was lost) or the same one.
 */
async function findTarget(deps: ReceiptDeps, via: string, report: ReceiptReport): Promise<DeliveryRecord | null> {
  const found = await deps.store.findDeliveryByProviderMessage(via, report.providerMessageId);
  if (found || report.notificationId === undefined) return found;
  const byId = await deps.store.getDelivery(report.notificationId);
  if (!byId || byId.via !== via) return null;
  return byId.provider_message_id === null || byId.provider_message_id === report.providerMessageId ? byId : null;
}

/**
 * A receipt can outrun its send's record: the provider's callback may arrive before its own
 * API answer does, and the record is written only after that answer. Such an early receipt is kept
 * in the store (answered 200 all the same: the provider does not resend a 200) and applied
 * when the record lands (applyEarlyReceipts, called by the send). Both sides write first and
 * look second, so whichever comes last sees the other: none is lost, and the store hands
 * each early receipt to one taker only, so none is applied twice.
 */
export async function applyReceipt(deps: ReceiptDeps, via: string, report: ReceiptReport): Promise<ReceiptOutcome> {
  const fields = fieldsOf(via, report);
  const found = await findTarget(deps, via, report);
  if (found) return advanceDelivery(deps, found, report);
  const now = deps.now();
  const seq = await deps.store.holdReceipt(
    {
      via,
      provider_message_id: report.providerMessageId,
      notification_id: report.notificationId ?? null,
      event: report.event,
      provider_status: report.providerStatus,
      provider_status_code: report.code,
      received_at: now,
    },
    { now, maxAgeMs: EARLY_RECEIPT_MAX_AGE_MS, maxRows: EARLY_RECEIPT_MAX_ROWS, maxPerMessage: EARLY_RECEIPTS_PER_MESSAGE },
  );
  if (seq === null) {
    deps.log.warn('receipt for no recorded message dropped: too many receipts held', {
      ...fields,
      maxRows: EARLY_RECEIPT_MAX_ROWS,
      maxPerMessage: EARLY_RECEIPTS_PER_MESSAGE,
    });
    return 'unknown_message';
  }
  deps.log.info('receipt held until its send is recorded', fields);
  // The record may have landed since the lookup, its send having taken the early receipts
  // before this one was stored: look once more, now that this one is stored.
  const recorded = await findTarget(deps, via, report);
  if (!recorded) return 'held';
  return (await applyEarlyReceipts(deps, recorded)).get(seq) ?? 'held';
}

/**
 * Applies, oldest first, the early receipts kept for `delivery` (just recorded, or just found)
 * and deletes them, in one store transaction. Its outcome per early receipt (by sequence
 * number). Call it only once the delivery is recorded: an early receipt taken is never kept again.
 */
export async function applyEarlyReceipts(deps: ReceiptDeps, delivery: DeliveryRecord): Promise<Map<number, ReceiptOutcome>> {
  const now = deps.now();
  const settled = await deps.store.settleHeldReceipts(delivery, (current, early) => foldEarly(current, early, now));
  const outcomes = new Map<number, ReceiptOutcome>();
  if (!settled) return outcomes;
  const log = deps.log.child({ notificationId: delivery.id });
  for (const { receipt, outcome, from, to, reason } of settled) {
    outcomes.set(receipt.seq, outcome);
    const fields = {
      via: receipt.via,
      event: receipt.event,
      providerStatus: receipt.provider_status,
      code: receipt.provider_status_code,
      held: true,
    };
    if (outcome === 'applied') log.info('receipt applied', { ...fields, from, status: to });
    else log.info('receipt ignored', { ...fields, status: from, reason });
  }
  return outcomes;
}

interface EarlyOutcome {
  receipt: TakenReceipt;
  outcome: 'applied' | 'ignored';
  from: DeliveryStatus;
  to: DeliveryStatus;
  reason?: string;
}

/** Early receipts folded into `delivery`, oldest first, each judged from where the one before left it. Pure. */
function foldEarly(delivery: DeliveryRecord, early: readonly TakenReceipt[], now: number): HeldReceiptSettlement<EarlyOutcome[]> {
  const oldest = now - EARLY_RECEIPT_MAX_AGE_MS;
  const outcomes: EarlyOutcome[] = [];
  let status = delivery.status;
  let providerId = delivery.provider_message_id;
  let last: TakenReceipt | undefined;
  for (const h of early) {
    // Past its age it counts as purged (it may belong to an earlier message with a reused id).
    if (h.received_at <= oldest) continue;
    if (providerId !== null && h.provider_message_id !== providerId) {
      outcomes.push({ receipt: h, outcome: 'ignored', from: status, to: status, reason: 'it names another provider message' });
      continue;
    }
    const step = advance(status, h.event);
    if (!step.ok) {
      outcomes.push({ receipt: h, outcome: 'ignored', from: status, to: status, reason: step.reason });
      continue;
    }
    outcomes.push({ receipt: h, outcome: 'applied', from: status, to: step.next });
    status = step.next;
    providerId = h.provider_message_id;
    last = h;
  }
  if (!last) return { change: null, result: outcomes };
  const change: DeliveryStatusChange = {
    from: delivery.status,
    status,
    provider_status: last.provider_status,
    provider_status_code: last.provider_status_code,
    at: now,
  };
  if (delivery.provider_message_id === null) change.provider_message_id = last.provider_message_id;
  return { change, result: outcomes };
}

/** Moves `delivery` as `report` says, if advance() allows, compare-and-set; re-read and judged again when another receipt got there first. */
async function advanceDelivery(
  deps: ReceiptDeps,
  delivery: DeliveryRecord,
  report: ReceiptReport,
  extra: Record<string, unknown> = {},
): Promise<'applied' | 'ignored'> {
  const fields = { ...fieldsOf(delivery.via, report), ...extra };
  const log = deps.log.child({ notificationId: delivery.id });
  let current: DeliveryRecord | null = delivery;
  for (let round = 0; round < ROUNDS && current; round++) {
    const step = advance(current.status, report.event);
    if (!step.ok) {
      log.info('receipt ignored', { ...fields, status: current.status, reason: step.reason });
      return 'ignored';
    }
    const change: DeliveryStatusChange = {
      from: current.status,
      status: step.next,
      provider_status: report.providerStatus,
      provider_status_code: report.code,
      at: deps.now(),
    };
    // A record whose send's answer was lost learns the provider's id from its first receipt.
    if (current.provider_message_id === null) change.provider_message_id = report.providerMessageId;
    const written = await deps.store.updateDeliveryStatus(current.id, change);
    if (written) {
      log.info('receipt applied', { ...fields, from: current.status, status: step.next });
      return 'applied';
    }
    current = await deps.store.getDelivery(current.id);
  }
  log.warn('receipt not applied: the notification kept changing under it', fields);
  return 'ignored';
}
