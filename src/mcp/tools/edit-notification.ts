/**
 * edit_notification: the MCP face of the edit use case (src/notification/edit.ts): its input,
 * description and output schema; the handler hands the call to the use case.
 */
import { z } from 'zod';
import type { ConfiguredChannel } from '../../channels/channel.js';
import { isApprovalAsk } from '../../notification/approval.js';
import { editNotification } from '../../notification/edit.js';
import { AskFirst, callerOf, type ObjectToolSpec } from '../tool-kit.js';
import { withErrorShape } from '../tool-result.js';

const input = z
  .object({
    id: z.string().min(1).max(64).meta({ description: 'ntf_… id' }),
    text: z.string().min(1).max(40_000),
    // Checked by the channel's own branch, as in a send (a Slack post: Block Kit, at most 50).
    blocks: z
      .array(z.looseObject({ type: z.string() }))
      .min(1)
      .max(50)
      .optional()
      .meta({ description: 'Block Kit' }),
  })
  .strict();

export function editNotificationTool(channels: readonly ConfiguredChannel[]): ObjectToolSpec<typeof input> {
  return {
    name: 'edit_notification',
    title: 'Edit notification',
    description:
      "Changes the text (and blocks) of your Slack post, or of your notification not yet sent (for email, text is body_html), under a send's rules, approval included. " +
      'Sent email and SMS: ALREADY_SENT.',
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
      const answer = await editNotification(ctx.deps, callerOf(ctx), args.id, { text: args.text, blocks: args.blocks });
      return isApprovalAsk(answer) ? new AskFirst(answer.request) : { ...answer };
    },
  };
}
