/**
 * edit_notification: changes the text (and blocks) of a Slack post the caller sent, through
 * chat.update, or of any notification not yet sent, under the same rules as a send: the
 * fields validate as send_notification's, the allowlist is asked again, broadcasts are
 * screened again (the channel builds the payload), and an edit of what a person approved is
 * not made behind their back. A send still waiting in the outbox (scheduled, held) waits
 * with the new call; one waiting for a person (pending_approval, or approved and not yet
 * released) waits for them again with the new payload and hash, so a decision on the old
 * one is refused. The record keeps the payload as it now stands.
 */
import { z } from 'zod';
import type { ConfiguredChannel } from '../../channels/channel.js';
import { NotifyError } from '../../core/errors.js';
import { advance } from '../../notification/status.js';
import { isAllowed } from '../../policy/allowlist.js';
import { payloadSha256 } from '../../notification/approval.js';
import type { DeliveryRecord } from '../../store/types.js';
import type { ObjectToolSpec, ToolContext } from '../tool-kit.js';
import { withErrorShape } from '../tool-result.js';
import { amendContext, amendFailure, channelOf, ownNotification } from './own-notification.js';

const input = z
  .object({
    id: z.string().min(1).max(64).meta({ description: 'ntf_… id' }),
    text: z.string().min(1).max(40_000),
    // Checked by the channel's own branch, as in a send (a Slack post: Block Kit, at most 50).
    blocks: z.array(z.looseObject({ type: z.string() })).min(1).max(50).optional().meta({ description: 'Block Kit' }),
  })
  .strict();

type Change = { text: string; blocks?: unknown[] | undefined };

/** `call` changed by `change` through its channel, validated as a send and asked of the allowlist again. */
async function editedCall(via: { via: string; id: string }, base: Record<string, unknown>, change: Change, ctx: ToolContext, build: boolean) {
  return channelOf(via, ctx.deps?.channels ?? [], async (channel) => {
    const raw = channel.editWaiting(channel.parse(base), change);
    if (raw === undefined) throw new NotifyError('INVALID_FIELD', `Notification ${via.id} is ${via.via}, whose sends cannot be edited before they leave; retract it and send anew.`, { path: '/id', via: via.via });
    const parsed = channel.branchOf(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new NotifyError('INVALID_FIELD', `Fix /${issue.path.map(String).join('/')}: ${issue.message}`, { path: `/${issue.path.map(String).join('/')}`, via: via.via });
    }
    const recipients = channel.recipients(parsed.data);
    for (const recipient of recipients) {
      if (!isAllowed(channel.matcher, recipient, channel.allow)) {
        throw new NotifyError('RECIPIENT_NOT_ALLOWED', `${recipient} is no longer allowed by ${channel.allowVariable}; nothing was changed.`, { via: via.via });
      }
    }
    const call = parsed.data as Record<string, unknown>;
    // What the person will be shown: built now, as a send's approval builds it.
    const payload = build ? (await channel.buildPayload(parsed.data, via.id, ctx.config.sendBudgetMs / 2, ctx.now())).payload : undefined;
    return { call, payload, recipients };
  });
}

/** A send still waiting in the outbox, with no record yet: its call replaced while it waits. Undefined when the id names none of the caller's. */
async function editWaiting(id: string, change: Change, ctx: ToolContext): Promise<Record<string, unknown> | undefined> {
  if (await ctx.store.getDelivery(id)) return undefined;
  const entry = await ctx.store.getOutboxEntry(id);
  if (!entry || !(ctx.operator === true || entry.client === ctx.client)) return undefined;
  const leftAlready = () =>
    new NotifyError('ALREADY_SENT', `Notification ${id} is no longer waiting (${entry.state}); it cannot be edited. Read it with get_notification.`, { path: '/id', via: entry.via });
  if (entry.state !== 'scheduled' && entry.state !== 'held') throw leftAlready();
  const { call } = await editedCall(entry, entry.call, change, ctx, false);
  // Of this edit and a release claiming it, one wins: a release that won sends the old call.
  const at = ctx.now();
  if (!(await ctx.store.editWaiting(id, call, at))) throw leftAlready();
  return { id, via: entry.via, status: entry.state, edited_at: new Date(at).toISOString() };
}

/**
 * A send waiting for a person, or approved and not yet released: rebuilt with the change and
 * put before a person again (`pending_approval`, with the new payload and hash). An approved
 * one is first taken back from the outbox; if its release claimed it first, it has left.
 */
async function editHeld(record: DeliveryRecord, change: Change, ctx: ToolContext): Promise<Record<string, unknown>> {
  const approval = record.approval;
  if (!approval?.call) throw new NotifyError('INVALID_FIELD', `Notification ${record.id} was held without its call, so it cannot be rebuilt; decline or retract it and send anew.`, { path: '/id', via: record.via });
  const { call, payload, recipients } = await editedCall(record, approval.call, change, ctx, true);
  const at = ctx.now();
  if (record.status === 'approved') {
    const taken = await ctx.store.moveWaiting(record.id, ['scheduled', 'held'], 'cancelled', at);
    if (!taken?.moved) throw new NotifyError('ALREADY_SENT', `Notification ${record.id} was approved and has left; send a correction instead.`, { path: '/id', via: record.via });
  }
  const { decided_by: _by, decided_at: _at, reason: _reason, ...rest } = approval;
  const revised = { ...rest, outcome: 'pending' as const, payload_sha256: payloadSha256(payload), recipients, call };
  const from = record.status as 'pending_approval' | 'approved';
  if (!(await ctx.store.reviseHeld(record.id, { from, payload, approval: revised, at }))) {
    throw new NotifyError('INVALID_FIELD', `Notification ${record.id} was decided while it was being edited; read it with get_notification.`, { path: '/id' });
  }
  ctx.log.info(from === 'approved' ? 'approved send edited: asked again' : 'held send edited', { notificationId: record.id, via: record.via });
  return { id: record.id, via: record.via, status: 'pending_approval', edited_at: new Date(at).toISOString() };
}

export function editNotificationTool(channels: readonly ConfiguredChannel[]): ObjectToolSpec<typeof input> {
  return {
    name: 'edit_notification',
    title: 'Edit notification',
    description:
      'Changes the text (and blocks) of your Slack post, or of your notification not yet sent (scheduled, held, pending_approval; ' +
      'for email, text is body_html), under a send\'s rules; approval is asked again. ' +
      'Sent email and SMS cannot change: ALREADY_SENT.',
    input,
    outputSchema: withErrorShape({
      properties: {
        id: { type: 'string' },
        via: { type: 'string', enum: channels.map((c) => c.name) },
        status: { type: 'string', enum: ['sent', 'dry_run', 'scheduled', 'held', 'pending_approval'] },
        edited_at: { type: 'string', format: 'date-time' },
      },
      required: ['id', 'via', 'status', 'edited_at'],
    }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    async handler(args, ctx) {
      const change: Change = { text: args.text, blocks: args.blocks };
      const waiting = await editWaiting(args.id, change, ctx);
      if (waiting) return waiting;
      const record = await ownNotification(args.id, ctx);
      if (record.status === 'pending_approval' || record.status === 'approved') return editHeld(record, change, ctx);
      const step = advance(record.status, 'edited');
      if (!step.ok) throw new NotifyError('INVALID_FIELD', `Notification ${record.id} cannot be edited: ${step.reason}.`, { path: '/id', via: record.via });
      const payload = await channelOf(record, ctx.deps?.channels ?? [], async (channel) => {
        const raw = channel.editCall(record.payload, { text: args.text, blocks: args.blocks });
        if (raw === undefined) {
          throw new NotifyError('ALREADY_SENT', `Notification ${record.id} is ${record.via}, which cannot be changed once handed over. Send a correction instead.`, { path: '/id', via: record.via });
        }
        // A person approved the post as it was: an edit would change what they approved.
        if (record.approval?.outcome === 'approved') {
          throw new NotifyError('APPROVAL_REQUIRED', `A person approved notification ${record.id} as it was; an edit would change what they approved. Send a new notification instead, which is asked again.`, { via: record.via });
        }
        const parsed = channel.branchOf(raw);
        if (!parsed.success) {
          const issue = parsed.error.issues[0]!;
          throw new NotifyError('INVALID_FIELD', `Fix /${issue.path.map(String).join('/')}: ${issue.message}`, { path: `/${issue.path.map(String).join('/')}`, via: record.via });
        }
        const call = parsed.data;
        for (const recipient of channel.recipients(call)) {
          if (channel.live && !isAllowed(channel.matcher, recipient, channel.allow)) {
            throw new NotifyError('RECIPIENT_NOT_ALLOWED', `${recipient} is no longer allowed by ${channel.allowVariable}; nothing was changed.`, { via: record.via });
          }
        }
        const built = await channel.buildPayload(call, record.id, ctx.config.sendBudgetMs / 2, record.created_at);
        if (channel.live && record.provider !== 'dry-run') {
          if (!channel.provider.edit || record.provider_message_id === null) throw new NotifyError('ALREADY_SENT', `Notification ${record.id} cannot be edited at its provider.`, { via: record.via });
          try {
            await channel.provider.edit({ payload: record.payload as never, providerMessageId: record.provider_message_id, conversation: record.provider_conversation ?? undefined }, built.payload, amendContext(record.id, ctx.config.sendBudgetMs, ctx.signal));
          } catch (err) {
            throw amendFailure(err, record.id, record.via, 'edit');
          }
        }
        return built.payload;
      });
      const at = ctx.now();
      const written = await ctx.store.amendDelivery(record.id, { from: record.status, status: step.next, payload, provider_status: 'edited', at, by: { client: ctx.client, tool: 'edit_notification' } });
      if (!written) throw new NotifyError('INVALID_FIELD', `Notification ${record.id} changed while it was being edited; read it with get_notification.`, { path: '/id' });
      return { id: record.id, via: record.via, status: step.next, edited_at: new Date(at).toISOString() };
    },
  };
}
