/**
 * show_banner: put an in-app banner in front of one audience segment. The MCP face of the
 * use case (src/banners/show.ts): its description and output schema; the handler hands the call on.
 */
import { showBanner as showBannerCase, showBannerInput as input } from '../../banners/show.js';
import type { ObjectToolSpec } from '../tool-kit.js';
import { withErrorShape } from '../tool-result.js';

export const showBanner: ObjectToolSpec<typeof input> = {
  name: 'show_banner',
  title: 'Show banner',
  // Each rule once: what the schema's keywords and property descriptions say is not repeated here.
  description:
    'Shows an in-app banner to one audience segment until it expires or is dismissed; "all" is a segment, not a wildcard. ' +
    'With dedupe_key, an active banner of that audience and key is returned (deduplicated: true).',
  input,
  outputSchema: withErrorShape({
    properties: {
      banner_id: { type: 'string', description: 'bnr_<uuid>; pass it to dismiss_banner' },
      status: { type: 'string', enum: ['active'] },
      expires_at: { type: 'string', format: 'date-time' },
      deduplicated: { type: 'boolean', description: 'true when an active banner with the same audience and dedupe_key was returned' },
    },
    required: ['banner_id', 'status', 'expires_at', 'deduplicated'],
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: (args, ctx) => showBannerCase(ctx, args).then((shown) => ({ ...shown })),
};
