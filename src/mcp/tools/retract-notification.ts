/**
 * retract_notification: takes back a notification the caller sent. What that means is the
 * notification's state's to say, in one switch (decide): a send still waiting in the outbox
 * (scheduled, held) is cancelled; a Slack post that stands is deleted (chat.delete,
 * `retracted`); a dry run's record is withdrawn, and a send waiting for a person's approval cancelled; an email or SMS already handed over cannot be
 * (ALREADY_SENT). The change goes through the one transition table.
 */
import { z } from 'zod';
import type { ConfiguredChannel } from '../../channels/channel.js';
import { NotifyError } from '../../core/errors.js';
import { cancelWaiting } from '../../notification/outbox.js';
import { advance } from '../../notification/status.js';
import type { DeliveryRecord } from '../../store/types.js';
import type { ObjectToolSpec, ToolContext } from '../tool-kit.js';
import { withErrorShape } from '../tool-result.js';
import { amendContext, amendFailure, channelOf, ownNotification } from './own-notification.js';

const input = z.object({ id: z.string().min(1).max(64).meta({ description: 'ntf_… id' }) }).strict();

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
      return { kind: 'refuse', code: 'ALREADY_SENT', why: `this ${record.via} was handed to its provider and cannot be taken back; send a correction instead` };
    case 'queued':
    case 'delivered':
    case 'undelivered':
    case 'unknown':
      return { kind: 'refuse', code: 'ALREADY_SENT', why: `this ${record.via} is ${record.status} at its provider and cannot be taken back; send a correction instead` };
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
async function retractWaiting(id: string, ctx: ToolContext): Promise<Record<string, unknown> | undefined> {
  if (await ctx.store.getDelivery(id)) return undefined;
  const entry = await ctx.store.getOutboxEntry(id);
  if (!entry || !(ctx.operator === true || entry.client === ctx.client)) return undefined;
  const result = await cancelWaiting({ store: ctx.store, now: ctx.now }, id, { client: ctx.client, tool: 'retract_notification' });
  if (result.kind === 'cancelled') return { id, via: entry.via, status: 'cancelled', retracted_at: new Date(ctx.now()).toISOString() };
  if (result.kind === 'not_found') return undefined;
  const state = result.entry.state;
  if (state === 'releasing' || state === 'released' || state === 'unknown') {
    throw new NotifyError('ALREADY_SENT', `Notification ${id} left the outbox before this retract (${state}); read it with get_notification, and send a correction if needed.`, { path: '/id', via: entry.via });
  }
  throw new NotifyError('INVALID_FIELD', `Notification ${id} cannot be retracted: it is ${state === 'failed' ? 'failed' : state} already.`, { path: '/id', via: entry.via });
}

async function retract(record: DeliveryRecord, ctx: ToolContext): Promise<void> {
  const channels = ctx.deps?.channels ?? [];
  const deletable = channels.some((c) => c.name === record.via && c.open((channel) => channel.provider.retract !== undefined));
  const decision = decide(record, deletable);
  if (decision.kind === 'refuse') throw new NotifyError(decision.code, `Notification ${record.id} cannot be retracted: ${decision.why}.`, { path: '/id', via: record.via });
  if (decision.kind === 'delete') {
    const messageId = record.provider_message_id;
    if (messageId === null) throw new NotifyError('INVALID_FIELD', `Notification ${record.id} has no Slack message id to delete; nothing was changed.`, { path: '/id', via: record.via });
    await channelOf(record, channels, async (channel) => {
      if (!channel.provider.retract) throw new NotifyError('ALREADY_SENT', `The ${record.via} provider cannot take a message back.`, { via: record.via });
      try {
        // The record holds the payload this channel built: its provider's own type.
        await channel.provider.retract({ payload: record.payload as never, providerMessageId: messageId, conversation: record.provider_conversation ?? undefined }, amendContext(record.id, ctx.config.sendBudgetMs, ctx.signal));
      } catch (err) {
        throw amendFailure(err, record.id, record.via, 'deletion');
      }
    });
  }
}

export function retractNotificationTool(channels: readonly ConfiguredChannel[]): ObjectToolSpec<typeof input> {
  return {
    name: 'retract_notification',
    title: 'Retract notification',
    description:
      'Takes back a notification you sent: cancels a scheduled or held one, deletes a Slack post, withdraws a dry run. ' +
      'Email or SMS already handed over: ALREADY_SENT.',
    input,
    outputSchema: withErrorShape({
      properties: {
        id: { type: 'string' },
        via: { type: 'string', enum: channels.map((c) => c.name) },
        status: { type: 'string', enum: ['retracted', 'cancelled'] },
        retracted_at: { type: 'string', format: 'date-time' },
      },
      required: ['id', 'via', 'status', 'retracted_at'],
    }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    async handler(args, ctx) {
      const waiting = await retractWaiting(args.id, ctx);
      if (waiting) return waiting;
      const record = await ownNotification(args.id, ctx);
      await retract(record, ctx);
      const step = advance(record.status, 'retracted');
      if (!step.ok) throw new NotifyError('INVALID_FIELD', `Notification ${record.id} cannot be retracted: ${step.reason}.`, { path: '/id' });
      const at = ctx.now();
      const written = await ctx.store.amendDelivery(record.id, { from: record.status, status: step.next, payload: record.payload, provider_status: 'deleted', at, by: { client: ctx.client, tool: 'retract_notification' } });
      if (!written) throw new NotifyError('INVALID_FIELD', `Notification ${record.id} changed while it was being retracted; read it with get_notification.`, { path: '/id' });
      return { id: record.id, via: record.via, status: step.next, retracted_at: new Date(at).toISOString() };
    },
  };
}
