/**
 * A verified provider receipt applied to its notification: found by the provider's message
 * id, moved only where advance() allows, and written compare-and-set, so that receipts
 * racing across replicas never move a notification backwards.
 *
 * A receipt can outrun its send's record: the provider's callback may arrive before its own
 * API answer does, and the record is written only after that answer. Such a receipt is held
 * in the store (answered 200 all the same: the provider does not resend a 200) and applied
 * when the record lands (applyHeldReceipts, called by the send). Both sides write first and
 * look second, so whichever comes last sees the other: none is lost, and the store hands
 * each held receipt to one taker only, so none is applied twice.
 */
import type { ReceiptReport } from '../channels/channel.js';
import type { Logger } from '../core/log.js';
import type { DeliveryRecord, Store } from '../store/types.js';
import { advance } from './status.js';

/** `held`: stored until its send's record lands. `unknown_message`: no record, and no room to hold it. */
export type ReceiptOutcome = 'applied' | 'ignored' | 'held' | 'unknown_message';

export interface ReceiptDeps {
  store: Store;
  log: Logger;
  now: () => number;
}

/**
 * A record lands within a send's budget of its receipt; a day covers any clock or queue
 * delay. An older held receipt will never find its record (the send crashed before writing
 * it) and is purged.
 */
export const HELD_RECEIPT_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/**
 * Only the provider can add rows (receipts are signature-verified), and each leaves as its
 * record lands; the cap bounds the table should records stop landing.
 */
export const HELD_RECEIPT_MAX_ROWS = 10_000;
/** Compare-and-set rounds before giving up (each lost round means another receipt moved it). */
const ROUNDS = 5;

const fieldsOf = (via: string, report: ReceiptReport) => ({ via, event: report.event, providerStatus: report.providerStatus, code: report.code });

export async function applyReceipt(deps: ReceiptDeps, via: string, report: ReceiptReport): Promise<ReceiptOutcome> {
  const fields = fieldsOf(via, report);
  const found = await deps.store.findDeliveryByProviderMessage(via, report.providerMessageId);
  if (found) return advanceDelivery(deps, found, report);
  const now = deps.now();
  const seq = await deps.store.holdReceipt(
    {
      via,
      provider_message_id: report.providerMessageId,
      event: report.event,
      provider_status: report.providerStatus,
      provider_status_code: report.code,
      received_at: now,
    },
    { now, maxAgeMs: HELD_RECEIPT_MAX_AGE_MS, maxRows: HELD_RECEIPT_MAX_ROWS },
  );
  if (seq === null) {
    deps.log.warn('receipt for no recorded message dropped: too many receipts held', { ...fields, maxRows: HELD_RECEIPT_MAX_ROWS });
    return 'unknown_message';
  }
  deps.log.info('receipt held until its send is recorded', fields);
  // The record may have landed since the lookup, its send having taken the held receipts
  // before this one was stored: look once more, now that this one is stored.
  const recorded = await deps.store.findDeliveryByProviderMessage(via, report.providerMessageId);
  if (!recorded) return 'held';
  return (await applyHeldReceipts(deps, recorded)).get(seq) ?? 'held';
}

/**
 * Applies, oldest first, the receipts held for `delivery` (just recorded, or just found),
 * and deletes them. Its outcome per held receipt (by sequence number). Call it only once
 * the delivery is recorded: a held receipt taken is never held again.
 */
export async function applyHeldReceipts(deps: ReceiptDeps, delivery: DeliveryRecord): Promise<Map<number, ReceiptOutcome>> {
  const outcomes = new Map<number, ReceiptOutcome>();
  if (delivery.provider_message_id === null) return outcomes;
  const held = await deps.store.takeHeldReceipts(delivery.via, delivery.provider_message_id);
  const oldest = deps.now() - HELD_RECEIPT_MAX_AGE_MS;
  let current: DeliveryRecord | null = delivery;
  for (const h of held) {
    // Past its age it counts as purged (it may belong to an earlier message with a reused id).
    if (h.received_at <= oldest || current === null) continue;
    const report: ReceiptReport = { providerMessageId: h.provider_message_id, event: h.event, providerStatus: h.provider_status, code: h.provider_status_code };
    outcomes.set(h.seq, await advanceDelivery(deps, current, report, { held: true }));
    // The next one is judged from where this one left it.
    if (held.length > 1) current = await deps.store.getDelivery(delivery.id);
  }
  return outcomes;
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
    const written = await deps.store.updateDeliveryStatus(current.id, {
      from: current.status,
      status: step.next,
      provider_status: report.providerStatus,
      provider_status_code: report.code,
      at: deps.now(),
    });
    if (written) {
      log.info('receipt applied', { ...fields, from: current.status, status: step.next });
      return 'applied';
    }
    current = await deps.store.getDelivery(current.id);
  }
  log.warn('receipt not applied: the notification kept changing under it', fields);
  return 'ignored';
}
