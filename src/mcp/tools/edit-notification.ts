/**
 * edit_notification: changes the text (and blocks) of a Slack post the caller sent, through
 * chat.update, under the same rules as a send: the fields validate as send_notification's,
 * the allowlist is asked again, broadcasts are screened again (the channel builds the payload),
 * and an edit of a post a person approved is not made behind their back. The record keeps the
 * payload as it now stands, and the edit goes through the one transition table.
 */
import { z } from 'zod';
import type { ConfiguredChannel } from '../../channels/channel.js';
import { NotifyError } from '../../core/errors.js';
import { advance } from '../../notification/status.js';
import { isAllowed } from '../../policy/allowlist.js';
import type { ObjectToolSpec } from '../tool-kit.js';
import { withErrorShape } from '../tool-result.js';
import { amendContext, amendFailure, channelOf, ownNotification } from './own-notification.js';

const input = z
  .object({
    id: z.string().min(1).max(64).meta({ description: 'ntf_… id of your Slack post' }),
    text: z.string().min(1).max(40_000),
    // Checked by the channel's own branch, as in a send (a Slack post: Block Kit, at most 50).
    blocks: z.array(z.looseObject({ type: z.string() })).min(1).max(50).optional().meta({ description: 'Block Kit, as in send_notification' }),
  })
  .strict();

export function editNotificationTool(channels: readonly ConfiguredChannel[]): ObjectToolSpec<typeof input> {
  return {
    name: 'edit_notification',
    title: 'Edit notification',
    description:
      'Changes the text (and blocks) of a Slack post you sent (chat.update), under the same rules as a send. ' +
      'Email and SMS cannot change once sent: ALREADY_SENT. Only your own notifications; others are NOT_FOUND.',
    input,
    outputSchema: withErrorShape({
      properties: {
        id: { type: 'string' },
        via: { type: 'string', enum: channels.map((c) => c.name) },
        status: { type: 'string', enum: ['sent', 'dry_run'] },
        edited_at: { type: 'string', format: 'date-time' },
      },
      required: ['id', 'via', 'status', 'edited_at'],
    }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    async handler(args, ctx) {
      const record = await ownNotification(args.id, ctx);
      const step = advance(record.status, 'edited');
      if (!step.ok) throw new NotifyError('INVALID_FIELD', `Notification ${record.id} cannot be edited: ${step.reason}.`, { path: '/id', via: record.via });
      // A person approved the post as it was: an edit would change what they approved.
      if (record.approval?.outcome === 'approved') {
        throw new NotifyError('APPROVAL_REQUIRED', `A person approved notification ${record.id} as it was; an edit would change what they approved. Send a new notification instead, which is asked again.`, { via: record.via });
      }
      const payload = await channelOf(record, ctx.deps?.channels ?? [], async (channel) => {
        const raw = channel.editCall(record.payload, { text: args.text, blocks: args.blocks });
        if (raw === undefined) {
          throw new NotifyError('ALREADY_SENT', `Notification ${record.id} is ${record.via}, which cannot be changed once handed over. Send a correction instead.`, { path: '/id', via: record.via });
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
      const written = await ctx.store.amendDelivery(record.id, { from: record.status, status: step.next, payload, provider_status: 'edited', at });
      if (!written) throw new NotifyError('INVALID_FIELD', `Notification ${record.id} changed while it was being edited; read it with get_notification.`, { path: '/id' });
      return { id: record.id, via: record.via, status: step.next, edited_at: new Date(at).toISOString() };
    },
  };
}
