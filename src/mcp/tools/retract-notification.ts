/**
 * retract_notification: the MCP face of the retract use case (src/notification/retract.ts):
 * its input, description and output schema; the handler hands the call to the use case.
 */
import { z } from 'zod';
import type { ConfiguredChannel } from '../../channels/channel.js';
import { retractNotification } from '../../notification/retract.js';
import { callerOf, type ObjectToolSpec } from '../tool-kit.js';
import { withErrorShape } from '../tool-result.js';

const input = z.object({ id: z.string().min(1).max(64).meta({ description: 'ntf_… id' }) }).strict();

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
    handler: async (args, ctx) => ({ ...(await retractNotification(ctx.deps, callerOf(ctx), args.id)) }),
  };
}
