/**
 * dismiss_banner: take a banner down; dismissing twice is not an error. The MCP face of the
 * use case (src/banners/dismiss.ts): its description and output schema; the handler hands the call on.
 */
import { dismissBanner as dismissBannerCase, dismissBannerInput as input } from '../../banners/dismiss.js';
import type { ObjectToolSpec } from '../tool-kit.js';
import { withErrorShape } from '../tool-result.js';

export const dismissBanner: ObjectToolSpec<typeof input> = {
  name: 'dismiss_banner',
  title: 'Dismiss banner',
  description:
    'Dismisses a banner for every viewer. Dismissing it again succeeds (already_dismissed: true); an unknown or expired one is NOT_FOUND.',
  input,
  outputSchema: withErrorShape({
    properties: {
      banner_id: { type: 'string' },
      status: { type: 'string', enum: ['dismissed'] },
      already_dismissed: { type: 'boolean' },
      dismissed_at: { type: 'string', format: 'date-time' },
    },
    required: ['banner_id', 'status', 'already_dismissed', 'dismissed_at'],
  }),
  // Destructive: it ends a banner and cannot be undone. Idempotent: repeating it changes nothing.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handler: (args, ctx) => dismissBannerCase(ctx, args.banner_id).then((dismissed) => ({ ...dismissed })),
};
