/** The banners port: banners shown by the feed, deduplicated per audience, and the version that guards its cache. */

export type BannerSeverity = 'info' | 'warning' | 'critical';
export type BannerStatus = 'active' | 'dismissed' | 'expired';

export interface BannerRecord {
  /** `bnr_<uuid>` */
  id: string;
  text: string;
  audience: string;
  severity: BannerSeverity;
  dedupe_key: string | null;
  created_at: number;
  expires_at: number | null;
  dismissed_at: number | null;
}

export interface BannersPort {
  /**
   * Inserts `banner`, unless it has a dedupe_key and an active banner (at
   * `banner.created_at`) of the same audience already holds that key: then that banner is
   * returned and nothing is inserted. A dedupe key is scoped to its audience. Atomic across
   * processes, so replicas racing on one key create one banner per audience.
   */
  insertBanner(banner: BannerRecord): Promise<BannerRecord>;
  /** Deletes banners dismissed or expired before `before` (the retention policy); returns how many. */
  purgeBanners(before: number): Promise<number>;
  getBanner(id: string): Promise<BannerRecord | null>;
  /** The active (undismissed, unexpired) banner of `audience` with this dedupe key, if any. */
  findActiveBannerByDedupe(audience: string, dedupeKey: string, now: number): Promise<BannerRecord | null>;
  /** Sets dismissed_at if unset; returns the banner as it is after the call. */
  dismissBanner(id: string, now: number): Promise<BannerRecord | null>;
  /**
   * Dismisses the banner if it is active at `now`, in one statement, so racing callers learn
   * from it alone which of them dismissed it (`dismissed`); then the banner as it is (null:
   * no such banner). A banner not active stays as it was: dismissed already, or expired.
   */
  endBanner(id: string, now: number): Promise<{ banner: BannerRecord; dismissed: boolean } | null>;
  /** Banners for any of `audiences` (all when omitted) in `status` (all when omitted), newest first. */
  listBanners(query: { audiences?: string[]; status?: BannerStatus; now: number; limit?: number }): Promise<BannerRecord[]>;
  /**
   * An opaque token that changes whenever any banner is inserted, updated or deleted, by
   * this process or any other sharing the database. Read it BEFORE the banners it guards:
   * a cache entry filled after reading token T is fresh for as long as the token is T.
   */
  bannersVersion(): Promise<string>;
}
