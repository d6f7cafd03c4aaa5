/**
 * The query apps use to show banners: the active banners of every segment the viewer
 * belongs to, and the cache of its rendered answer. Served by the HTTP transport at
 * GET /banners?audience=all,admins.
 */
import { createHash } from 'node:crypto';
import type { BannerRecord, BannerSeverity, BannersPort } from '../store/ports/banners.js';
import { invalidAudience, tooManyAudiences } from './feed-errors.js';
import { AUDIENCE_RE, iso } from './model.js';

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
export async function activeBanners(store: BannersPort, audiences: string[], now: number): Promise<FeedBanner[]> {
  const segments = [...new Set(audiences)];
  if (segments.length === 0) return [];
  return toFeed(await store.listBanners({ audiences: segments, status: 'active', now, limit: FEED_LIMIT }));
}

/** `rows` newest first, as the store lists them; the feed puts the most severe first. */
export function toFeed(rows: BannerRecord[]): FeedBanner[] {
  return rows
    .map((b, order) => ({ b, order }))
    .sort((x, y) => SEVERITY_RANK[x.b.severity] - SEVERITY_RANK[y.b.severity] || x.order - y.order)
    .map(({ b }) => feedBanner(b));
}

/** One banner as the feed (GET /banners, the stream, the resources) shows it. */
export function feedBanner(b: BannerRecord): FeedBanner {
  return {
    banner_id: b.id,
    text: b.text,
    audience: b.audience,
    severity: b.severity,
    created_at: iso(b.created_at),
    expires_at: iso(b.expires_at),
  };
}

/** The feed as served: `{"audience":[…],"banners":[…]}` as UTF-8 bytes, and its strong ETag. */
export interface RenderedFeed {
  readonly body: Buffer;
  readonly etag: string;
}

function rendered(audiences: string[], banners: FeedBanner[]): RenderedFeed {
  const body = Buffer.from(JSON.stringify({ audience: audiences, banners }));
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

/** Distinct audience lists cached per store; past this the least recently used is dropped. */
export const FEED_CACHE_ENTRIES = 256;

interface CacheEntry extends RenderedFeed {
  /** store.bannersVersion() read before the rows were. */
  version: string;
  /** The `now` the rows were read at, and the first instant one of them has expired. */
  filledAt: number;
  validUntil: number;
}

/**
 * Rendered feeds per audience list, correct across processes and replicas sharing the
 * store: every use first reads the store's banners version (one indexed row), so any
 * insert, dismissal or purge anywhere makes the next request re-read. The one change
 * that writes nothing, a held banner reaching its expires_at, is covered by validUntil
 * (a banner outside the answer can only enter when one inside leaves). A clock that
 * steps back behind filledAt also re-reads: a banner expired then may be active again.
 */
export class FeedCache {
  private readonly entries = new Map<string, CacheEntry>();
  private versionInFlight: Promise<string> | undefined;
  private versionQueued: Promise<string> | undefined;

  constructor(
    private readonly store: BannersPort,
    private readonly maxEntries = FEED_CACHE_ENTRIES,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** `audiences` as parseAudienceParam returns them (distinct; the body echoes their order). */
  async render(audiences: string[], now: number): Promise<RenderedFeed> {
    if (audiences.length === 0) return rendered(audiences, []);
    const key = audiences.join(',');
    // Before the rows: a write landing in between leaves the entry older than its data, never newer.
    const version = await this.currentVersion();
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.version === version && now >= hit.filledAt && now < hit.validUntil) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const rows = await this.store.listBanners({ audiences, status: 'active', now, limit: FEED_LIMIT });
    let validUntil = Infinity;
    for (const b of rows) if (b.expires_at !== null && b.expires_at < validUntil) validUntil = b.expires_at;
    const entry: CacheEntry = { ...rendered(audiences, toFeed(rows)), version, filledAt: now, validUntil };
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    return entry;
  }

  /**
   * The store's version as read by a query that started after this call, shared by the
   * callers waiting for it: at most one read in flight and one queued, however many
   * requests arrive (on PostgreSQL each read is a round trip). Joining the read already in
   * flight would be wrong: it may have started before a write this caller has seen commit.
   */
  private currentVersion(): Promise<string> {
    if (this.versionInFlight === undefined) return this.readVersion();
    this.versionQueued ??= this.versionInFlight.then(
      () => this.startQueued(),
      () => this.startQueued(),
    );
    return this.versionQueued;
  }

  private startQueued(): Promise<string> {
    this.versionQueued = undefined;
    return this.readVersion();
  }

  private readVersion(): Promise<string> {
    const read = this.store.bannersVersion().finally(() => {
      if (this.versionInFlight === read) this.versionInFlight = undefined;
    });
    this.versionInFlight = read;
    return read;
  }
}

const caches = new WeakMap<BannersPort, FeedCache>();

/** The process's feed cache for `store`, made on first use; it lives as long as the store. */
export function feedCacheFor(store: BannersPort): FeedCache {
  let cache = caches.get(store);
  if (!cache) {
    cache = new FeedCache(store);
    caches.set(store, cache);
  }
  return cache;
}

/**
 * Parses the `audience` query parameter (`all,admins`): comma-separated segment names.
 * Absent or empty means no segments. A malformed name is INVALID_FIELD, so an app's typo
 * is loud rather than an empty strip.
 */
/** Segments one feed request may name: far more than one viewer belongs to. */
export const MAX_AUDIENCES = 32;

export function parseAudienceParam(raw: string | null | undefined): string[] {
  if (!raw) return [];
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!AUDIENCE_RE.test(name)) {
      throw invalidAudience(name);
    }
  }
  const distinct = [...new Set(names)];
  // Each segment a live stream follows is one store read per change (src/banners/hub.ts).
  if (distinct.length > MAX_AUDIENCES) {
    throw tooManyAudiences(distinct.length, MAX_AUDIENCES);
  }
  return distinct;
}
