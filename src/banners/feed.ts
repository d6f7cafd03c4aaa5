/**
 * The query apps use to show banners: the active banners of every segment the viewer
 * belongs to. Served by the HTTP transport at GET /banners?audience=all,admins.
 */
import { NotifyError } from '../errors.js';
import type { Store } from '../store/types.js';
import { AUDIENCE_RE, iso } from './model.js';
import type { BannerSeverity } from '../store/types.js';

export interface FeedBanner {
  banner_id: string;
  text: string;
  audience: string;
  severity: BannerSeverity;
  created_at: string;
  expires_at: string | null;
}

/** Apps render a bounded strip; more than this many active banners is a misuse. */
export const FEED_LIMIT = 50;
const SEVERITY_RANK: Record<BannerSeverity, number> = { critical: 0, warning: 1, info: 2 };

/**
 * Active banners for any of `audiences` (exact names; `all` is not a wildcard), most
 * severe first, then newest first. No audiences: no banners.
 */
export async function activeBanners(store: Store, audiences: string[], now: number): Promise<FeedBanner[]> {
  const segments = [...new Set(audiences)];
  if (segments.length === 0) return [];
  const rows = await store.listBanners({ audiences: segments, status: 'active', now, limit: FEED_LIMIT });
  return rows
    .map((b, order) => ({ b, order }))
    .sort((x, y) => SEVERITY_RANK[x.b.severity] - SEVERITY_RANK[y.b.severity] || x.order - y.order)
    .map(({ b }) => ({
      banner_id: b.id,
      text: b.text,
      audience: b.audience,
      severity: b.severity,
      created_at: iso(b.created_at),
      expires_at: iso(b.expires_at),
    }));
}

/**
 * Parses the `audience` query parameter (`all,admins`): comma-separated segment names.
 * Absent or empty means no segments. A malformed name is INVALID_FIELD, so an app's typo
 * is loud rather than an empty strip.
 */
export function parseAudienceParam(raw: string | null | undefined): string[] {
  if (!raw) return [];
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!AUDIENCE_RE.test(name)) {
      throw new NotifyError(
        'INVALID_FIELD',
        `audience "${name}" is not a segment name: use 1-64 of a-z 0-9 : _ -, starting with a letter or digit, comma-separated.`,
        { path: '/audience' },
      );
    }
  }
  return [...new Set(names)];
}
