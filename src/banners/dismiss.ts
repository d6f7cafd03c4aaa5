/**
 * Dismissing a banner (dismiss_banner, and the console's button): it ends for every viewer.
 * Dismissing it again succeeds (already dismissed); an unknown or expired one is NOT_FOUND.
 */
import { z } from 'zod';
import { errors } from '../core/errors.js';
import { bannerStatus } from '../store/banner-status.js';
import { bannersWritten } from './hub.js';
import { iso } from './model.js';
import type { BannerDeps } from './show.js';

/** What dismissing a banner takes: dismiss_banner's input. */
export const dismissBannerInput = z
  .object({
    banner_id: z.string().min(1).max(64).describe('bnr_… id from show_banner'),
  })
  .strict();

/** What dismissing answers: the banner, whether it was dismissed before this call, and when it was. */
export interface Dismissed {
  banner_id: string;
  status: 'dismissed';
  already_dismissed: boolean;
  dismissed_at: string;
}

/** Dismisses banner `id`; throws NOT_FOUND for an unknown or expired one. */
export async function dismissBanner(deps: BannerDeps, id: string): Promise<Dismissed> {
  const now = deps.now();
  // The dismissal itself says who ended the banner: a read before it could be stale by the
  // time it runs (another call dismissing it, or its expires_at passing).
  const ended = await deps.store.endBanner(id, now);
  if (!ended) {
    throw errors.notFound(`No banner has id ${id}: check the id show_banner returned (banners are deleted 30 days after they end).`, {
      path: '/banner_id',
    });
  }
  const { banner, dismissed } = ended;
  if (!dismissed && bannerStatus(banner, now) === 'expired') {
    throw errors.notFound(`Banner ${id} expired at ${iso(banner.expires_at)} and is no longer shown, so there is nothing to dismiss.`, {
      path: '/banner_id',
    });
  }
  if (dismissed) {
    bannersWritten(deps.store);
    deps.log.info('banner dismissed', { banner_id: id });
  }
  return { banner_id: id, status: 'dismissed', already_dismissed: !dismissed, dismissed_at: iso(banner.dismissed_at ?? now) };
}
