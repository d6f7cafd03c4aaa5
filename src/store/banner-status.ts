/**
 * What a banner's status is at a given time, in one place for both stores and the tools:
 * dismissal wins over expiry, and a banner is expired from its `expires_at` on.
 */
import type { BannerRecord, BannerStatus } from './types.js';

export function bannerStatus(banner: BannerRecord, now: number): BannerStatus {
  if (banner.dismissed_at !== null) return 'dismissed';
  if (banner.expires_at !== null && banner.expires_at <= now) return 'expired';
  return 'active';
}

/** SQL for the same rule; `now` is the dialect's placeholder for the current time. */
export function bannerStatusSql(status: BannerStatus, now: string): string {
  switch (status) {
    case 'active':
      return `(dismissed_at IS NULL AND (expires_at IS NULL OR expires_at > ${now}))`;
    case 'dismissed':
      return `(dismissed_at IS NOT NULL)`;
    case 'expired':
      return `(dismissed_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ${now})`;
  }
}
