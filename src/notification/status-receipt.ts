/**
 * A verified provider receipt applied to its notification: found by the provider's message
 * id, moved only where advance() allows, and written compare-and-set, so that receipts
 * racing across replicas never move a notification backwards.
 */
import type { ReceiptReport } from '../channels/channel.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { advance } from './status.js';

export type ReceiptOutcome = 'applied' | 'ignored' | 'unknown_message';

export interface ReceiptDeps {
  store: Store;
  log: Logger;
  now: () => number;
  /** Waits between lookups of a message not recorded yet (tests shorten it). */
  sleep?: (ms: number) => Promise<void>;
}

/** A receipt can outrun its send's record (written just after the provider answered): look again this often, this many times. */
const LOOKUP_RETRY_MS = 250;
const LOOKUPS = 5;
/** Compare-and-set rounds before giving up (each lost round means another receipt moved it). */
const ROUNDS = 5;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function applyReceipt(deps: ReceiptDeps, via: string, report: ReceiptReport): Promise<ReceiptOutcome> {
  const sleep = deps.sleep ?? pause;
  const fields = { via, event: report.event, providerStatus: report.providerStatus, code: report.code };
  for (let round = 0, lookups = 0; round < ROUNDS; ) {
    const delivery = await deps.store.findDeliveryByProviderMessage(via, report.providerMessageId);
    if (!delivery) {
      if (++lookups >= LOOKUPS) {
        deps.log.warn('receipt for no recorded message', fields);
        return 'unknown_message';
      }
      await sleep(LOOKUP_RETRY_MS);
      continue;
    }
    const log = deps.log.child({ notificationId: delivery.id });
    const step = advance(delivery.status, report.event);
    if (!step.ok) {
      log.info('receipt ignored', { ...fields, status: delivery.status, reason: step.reason });
      return 'ignored';
    }
    const written = await deps.store.updateDeliveryStatus(delivery.id, {
      from: delivery.status,
      status: step.next,
      provider_status: report.providerStatus,
      provider_status_code: report.code,
      at: deps.now(),
    });
    if (written) {
      log.info('receipt applied', { ...fields, from: delivery.status, status: step.next });
      return 'applied';
    }
    round++;
  }
  deps.log.warn('receipt not applied: the notification kept changing under it', fields);
  return 'ignored';
}
