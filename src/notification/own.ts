/**
 * What the use cases that act on a sent notification share (./edit.ts, ./retract.ts): who
 * calls, the notification they may act on, its channel, and a provider's amend call.
 */
import type { ConnectedChannel, TypedChannel } from '../channels/channel.js';
import { errors } from '../core/errors.js';
import { DeliveryUnknownError, ProviderRejectedError, ProviderError } from '../providers/errors.js';
import type { DeliveriesPort, DeliveryRecord } from '../store/ports/deliveries.js';
import type { ApprovalRound } from './approval.js';

/** Who acts: the client (the token's over HTTP, else clientInfo.name), whether an operator, the call's cancel, and its approval round. */
export interface Caller {
  client: string | null;
  operator: boolean;
  signal: AbortSignal;
  approval?: ApprovalRound | undefined;
}

/**
 * The notification a call names, if the caller may act on it: its own, or any for an
 * operator, as get_notification decides. Someone else's id and an unknown one get the same
 * answer, so an id's existence does not leak.
 */
export async function ownNotification(store: DeliveriesPort, id: string, caller: Caller): Promise<DeliveryRecord> {
  const record = await store.getDelivery(id);
  if (!record || !(caller.operator || record.client === caller.client)) {
    throw errors.notYourNotification(id);
  }
  return record;
}

/** The connected channel a record was sent on, opened with its types. */
export function channelOf<R>(
  record: Pick<DeliveryRecord, 'via'>,
  channels: readonly ConnectedChannel[],
  use: <C, P>(channel: TypedChannel<C, P>) => R,
): R {
  const channel = channels.find((c) => c.name === record.via);
  if (!channel)
    throw errors.channelUnavailable(`The ${record.via} channel is not configured on this server any more; nothing was changed.`, {
      via: record.via,
    });
  return channel.open(use);
}

/** A provider call of an edit or retraction: the send's budget, and no retry (the caller sees the outcome and decides). */
export function amendContext(
  id: string,
  budgetMs: number,
  signal: AbortSignal,
): { notificationId: string; signal: AbortSignal; deadline: number } {
  return { notificationId: id, signal: AbortSignal.any([signal, AbortSignal.timeout(budgetMs)]), deadline: Date.now() + budgetMs };
}

/** A provider's failure to edit or delete, in the tool's codes; the record is left as it was. */
export function amendFailure(err: unknown, id: string, via: string, what: string): unknown {
  if (!(err instanceof ProviderError)) return err;
  if (err instanceof ProviderRejectedError)
    return errors.providerRejected(`The provider refused the ${what}: ${err.message}. Nothing was changed.`, { via, cause: err });
  if (err instanceof DeliveryUnknownError) {
    return errors.deliveryUnknown(
      `The ${what} may or may not have reached the provider (${err.message}); read the message in Slack before trying again.`,
      { via, notificationId: id, cause: err },
    );
  }
  return errors.providerUnavailable(
    `The provider could not take the ${what} now (${err.message}); nothing was changed. Try again shortly.`,
    { via, retryAfterS: 5, cause: err },
  );
}
