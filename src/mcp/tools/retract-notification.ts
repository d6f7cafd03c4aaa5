/**
 * retract_notification: the MCP face of the retract use case (src/notification/retract.ts):
 * its input, description and output schema; the handler hands the call to the use case.
 */
import { z } from 'zod';
import type { ConfiguredChannel } from '../../channels/channel.js';
import { retractNotification } from '../../notification/retract.js';
import { callerOf, type ObjectToolSpec } from '../tool-kit.js';
import { withErrorShape } from '../tool-result.js';

const input = z.object({ id: z.string().min(1).max(64).meta({ description: 'ntf_… id of your notification' }) }).strict();

export function retractNotificationTool(channels: readonly ConfiguredChannel[]): ObjectToolSpec<typeof input> {
  return {
    name: 'retract_notification',
    title: 'Retract notification',
    description:
      'Takes back a notification you sent: a scheduled or held one is cancelled; a Slack post is deleted (status retracted); a dry run is withdrawn. ' +
      'An email or SMS already handed over cannot be: ALREADY_SENT. Only your own notifications; others are NOT_FOUND.',
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
    handler: async (args, ctx) => ({ ...(await retractNotification(ctx.deps!, callerOf(ctx), args.id)) }),
  };
}
