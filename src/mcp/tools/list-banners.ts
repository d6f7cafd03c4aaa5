/** list_banners: read-only view of banners, for agents checking what is up. */
import { z } from 'zod';
import type { ObjectToolSpec } from '../tool-kit.js';
import { withErrorShape } from '../tool-result.js';
import { AUDIENCE_RE, bannerView, bannerViewSchema, LIST_LIMIT, STATUSES } from '../../banners/model.js';

const input = z
  .object({
    audience: z.string().regex(AUDIENCE_RE).optional(),
    status: z.enum(STATUSES).optional(),
  })
  .strict();

export const listBanners: ObjectToolSpec<typeof input> = {
  name: 'list_banners',
  title: 'List banners',
  description:
    `Lists banners, newest first, at most ${LIST_LIMIT} (truncated: true if more). ` + 'Ended banners stay listed 30 days. Read-only.',
  input,
  outputSchema: withErrorShape({
    properties: {
      banners: { type: 'array', items: bannerViewSchema },
      count: { type: 'integer', description: 'how many banners are in this answer' },
      truncated: { type: 'boolean', description: `true when more than ${LIST_LIMIT} matched` },
    },
    required: ['banners', 'count', 'truncated'],
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(args, ctx) {
    const now = ctx.now();
    const rows = await ctx.store.listBanners({
      audiences: args.audience === undefined ? undefined : [args.audience],
      status: args.status,
      now,
      limit: LIST_LIMIT + 1,
    });
    const banners = rows.slice(0, LIST_LIMIT).map((b) => bannerView(b, now));
    return { banners, count: banners.length, truncated: rows.length > LIST_LIMIT };
  },
};
