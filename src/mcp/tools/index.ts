/**
 * The object tools, one module each (name, input schema, output schema, annotations and
 * handler together), in the order tools/list shows them after the send tools
 * (send-notification.ts, shaped per profile by the union library).
 */
import type { ConfiguredChannel } from '../../channels/channel.js';
import type { ObjectToolSpec } from '../tool-kit.js';
import { dismissBanner } from './dismiss-banner.js';
import { editNotificationTool } from './edit-notification.js';
import { getNotificationTool } from './get-notification.js';
import { listBanners } from './list-banners.js';
import { retractNotificationTool } from './retract-notification.js';
import { showBanner } from './show-banner.js';

export function objectTools(channels: readonly ConfiguredChannel[]): ObjectToolSpec[] {
  return [getNotificationTool(channels), editNotificationTool(channels), retractNotificationTool(channels), ...bannerTools];
}

export const bannerTools: ObjectToolSpec[] = [showBanner, dismissBanner, listBanners];
