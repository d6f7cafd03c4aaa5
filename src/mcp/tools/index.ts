/**
 * The object tools, one module each (name, input schema, output schema, annotations and
 * handler together), in the order tools/list shows them after the send tools
 * (send-notification.ts, shaped per profile by the union library).
 */
import type { ConfiguredChannel } from '../../channels/channel.js';
import type { ObjectToolSpec } from '../tool-kit.js';
import { dismissBanner } from './dismiss-banner.js';
import { getNotificationTool } from './get-notification.js';
import { listBanners } from './list-banners.js';
import { showBanner } from './show-banner.js';

export function objectTools(channels: readonly ConfiguredChannel[]): ObjectToolSpec[] {
  return [getNotificationTool(channels), ...bannerTools];
}

export const bannerTools: ObjectToolSpec[] = [showBanner, dismissBanner, listBanners];
