/**
 * Taking a notification back (retract_notification, and the console's retract of a waiting
 * send). What that means is the notification's state's to say, in one switch (decide): a
 * send still waiting in the outbox (scheduled, held) is cancelled; a Slack post that stands
 * is deleted (chat.delete, `retracted`); a dry run's record is withdrawn, and a send waiting
 * for a person's approval cancelled; an email or SMS already handed over cannot be
 * (ALREADY_SENT). The change goes through the one transition table.
 */
import { errors } from '../core/errors.js';
import type { DeliveryRecord, DeliveryStatus } from '../store/ports/deliveries.js';
import { cancelWaiting } from './outbox.js';
import { stopEscalation } from './stop-escalation.js';
import { amendContext, amendFailure, channelOf, ownNotification, type Caller } from './own.js';
import type { PipelineDeps } from './send-deps.js';
import { advance } from './status.js';

/** What a retract answers: the notification, where it now stands (`retracted`, `cancelled`), and when. */
export interface Retracted {
  id: string;
  via: string;
  status: DeliveryStatus;
  retracted_at: string;
}

/** Takes notification `id` back as `caller` asks; throws a NotifyError saying why when it cannot be. */
export async function retractNotification(deps: PipelineDeps, caller: Caller, id: string): Promise<Retracted> {
  const waiting = await retractWaiting(deps, caller, id);
  if (waiting) return waiting;
  const record = await ownNotification(deps.store, id, caller);
  // Its escalation's steps still waiting stop whatever becomes of the message itself (an SMS
  // already handed over cannot be taken back, but no one need be paged about it any more).
  await stopEscalation(deps, record.id, { client: caller.client, tool: 'retract_notification' });
  await takeBack(deps, caller, record);
  const step = advance(record.status, 'retracted');
  if (!step.ok) throw errors.invalidField(`Notification ${record.id} cannot be retracted: ${step.reason}.`, { path: '/id' });
  const at = deps.now();
  const written = await deps.store.amendDelivery(record.id, {
    from: record.status,
    status: step.next,
    payload: record.payload,
    provider_status: 'deleted',
    at,
    by: { client: caller.client, tool: 'retract_notification' },
  });
  if (!written)
    throw errors.invalidField(`Notification ${record.id} changed while it was being retracted; read it with get_notification.`, {
      path: '/id',
    });
  return { id: record.id, via: record.via, status: step.next, retracted_at: new Date(at).toISOString() };
}

type Decision = { kind: 'delete' } | { kind: 'withdraw' } | { kind: 'refuse'; code: 'ALREADY_SENT' | 'INVALID_FIELD'; why: string };

/** What retracting a notification in this state does: one branch per state. `deletable`: its channel's provider can take a message back. */
function decide(record: DeliveryRecord, deletable: boolean): Decision {
  switch (record.status) {
    case 'dry_run':
    case 'pending_approval':
      return { kind: 'withdraw' };
    case 'approved':
      return { kind: 'refuse', code: 'ALREADY_SENT', why: 'a person approved it and it is leaving; send a correction instead' };
    case 'declined':
      return { kind: 'refuse', code: 'INVALID_FIELD', why: 'it was declined, so nothing was sent to take back' };
    case 'sent':
      if (deletable) return { kind: 'delete' };
      return {
        kind: 'refuse',
        code: 'ALREADY_SENT',
        why: `this ${record.via} was handed to its provider and cannot be taken back; send a correction instead`,
      };
    case 'queued':
    case 'delivered':
    case 'undelivered':
    case 'unknown':
      return {
        kind: 'refuse',
        code: 'ALREADY_SENT',
        why: `this ${record.via} is ${record.status} at its provider and cannot be taken back; send a correction instead`,
      };
    case 'failed':
      return { kind: 'refuse', code: 'INVALID_FIELD', why: 'it failed, so nothing was sent to take back' };
    case 'retracted':
      return { kind: 'refuse', code: 'INVALID_FIELD', why: 'it was retracted already' };
    // A waiting send has no delivery record until it leaves (retractWaiting); these come from a record's status only by mistake.
    case 'scheduled':
    case 'held':
    case 'cancelled':
    case 'expired':
      return { kind: 'refuse', code: 'INVALID_FIELD', why: `it is ${record.status}` };
  }
}

/**
 * A send still in the outbox (no delivery record yet): cancelled in one statement, so of a
 * retract and a release racing exactly one wins, and the answer says which. Undefined when
 * the id names no waiting send of the caller's (the record path decides, or NOT_FOUND).
 */
async function retractWaiting(deps: PipelineDeps, caller: Caller, id: string): Promise<Retracted | undefined> {
  if (await deps.store.getDelivery(id)) return undefined;
  const entry = await deps.store.getOutboxEntry(id);
  if (!entry || !(caller.operator || entry.client === caller.client)) return undefined;
  const result = await cancelWaiting(deps, id, { client: caller.client, tool: 'retract_notification' });
  if (result.kind === 'cancelled') {
    await stopEscalation(deps, id, { client: caller.client, tool: 'retract_notification' });
    return { id, via: entry.via, status: 'cancelled', retracted_at: new Date(deps.now()).toISOString() };
  }
  if (result.kind === 'not_found') return undefined;
  const state = result.entry.state;
  if (state === 'releasing' || state === 'released' || state === 'unknown') {
    throw errors.alreadySent(
      `Notification ${id} left the outbox before this retract (${state}); read it with get_notification, and send a correction if needed.`,
      { path: '/id', via: entry.via },
    );
  }
  throw errors.invalidField(`Notification ${id} cannot be retracted: it is ${state === 'failed' ? 'failed' : state} already.`, {
    path: '/id',
    via: entry.via,
  });
}

async function takeBack(deps: PipelineDeps, caller: Caller, record: DeliveryRecord): Promise<void> {
  const channels = deps.channels;
  const deletable = channels.some((c) => c.name === record.via && c.open((channel) => channel.provider.retract !== undefined));
  const decision = decide(record, deletable);
  if (decision.kind === 'refuse')
    throw errors[decision.code === 'ALREADY_SENT' ? 'alreadySent' : 'invalidField'](
      `Notification ${record.id} cannot be retracted: ${decision.why}.`,
      { path: '/id', via: record.via },
    );
  if (decision.kind === 'delete') {
    const messageId = record.provider_message_id;
    if (messageId === null)
      throw errors.invalidField(`Notification ${record.id} has no Slack message id to delete; nothing was changed.`, {
        path: '/id',
        via: record.via,
      });
    await channelOf(record, channels, async (channel) => {
      if (!channel.provider.retract)
        throw errors.alreadySent(`The ${record.via} provider cannot take a message back.`, { via: record.via });
      try {
        // The record holds the payload this channel built: its provider's own type.
        await channel.provider.retract(
          { payload: record.payload as never, providerMessageId: messageId, conversation: record.provider_conversation ?? undefined },
          amendContext(record.id, deps.config.sendBudgetMs, caller.signal),
        );
      } catch (err) {
        throw amendFailure(err, record.id, record.via, 'deletion');
      }
    });
  }
}
