/** dismiss_banner: take a banner down; dismissing twice is not an error. */
import { z } from 'zod';
import { errors } from '../../core/errors.js';
import { bannerStatus } from '../../store/banner-status.js';
import type { ObjectToolSpec } from '../tool-kit.js';
import { withErrorShape } from '../tool-result.js';
import { iso } from '../../banners/model.js';
import { bannersWritten } from '../../banners/hub.js';

const input = z
  .object({
    banner_id: z.string().min(1).max(64).describe('bnr_… id from show_banner'),
  })
  .strict();

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
  async handler(args, ctx) {
    const now = ctx.now();
    // The dismissal itself says who ended the banner: a read before it could be stale by the
    // time it runs (another call dismissing it, or its expires_at passing).
    const ended = await ctx.store.endBanner(args.banner_id, now);
    if (!ended) {
      throw errors.notFound(
        `No banner has id ${args.banner_id}: check the id show_banner returned (banners are deleted 30 days after they end).`,
        { path: '/banner_id' },
      );
    }
    const { banner, dismissed } = ended;
    if (!dismissed && bannerStatus(banner, now) === 'expired') {
      throw errors.notFound(
        `Banner ${args.banner_id} expired at ${iso(banner.expires_at)} and is no longer shown, so there is nothing to dismiss.`,
        { path: '/banner_id' },
      );
    }
    if (dismissed) {
      bannersWritten(ctx.store);
      ctx.log.info('banner dismissed', { banner_id: args.banner_id });
    }
    const alreadyDismissed = !dismissed;
    return {
      banner_id: args.banner_id,
      status: 'dismissed',
      already_dismissed: alreadyDismissed,
      dismissed_at: iso(banner.dismissed_at ?? now),
    };
  },
};
