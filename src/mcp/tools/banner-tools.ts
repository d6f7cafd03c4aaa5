/** The banner tools, in the order tools/list shows them, and the feed query apps read. */
import type { ObjectToolSpec } from '../tool-kit.js';
import { dismissBanner } from './dismiss-banner.js';
import { listBanners } from './list-banners.js';
import { showBanner } from './show-banner.js';

export const bannerTools: ObjectToolSpec[] = [showBanner, dismissBanner, listBanners];

export { activeBanners, parseAudienceParam, FEED_LIMIT, type FeedBanner } from '../../banners/feed.js';
export { RETENTION_MS, DEFAULT_LIFETIME_MS, MAX_LIFETIME_MS } from '../../banners/model.js';
export { showBanner, dismissBanner, listBanners };
