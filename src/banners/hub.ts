/**
 * The live banner feed of one process: one poller over the store, fanned out to every
 * open stream (SSE readers, MCP resource subscribers). It holds the active banners of each
 * segment someone follows, re-reads them when the store's banners version moves (a write
 * by any process sharing the store) or when a held banner reaches its expires_at (which
 * writes nothing), and turns the difference into events with a cursor, kept for a while
 * so that a reader who reconnects with Last-Event-ID gets what it missed.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../core/log.js';
import type { BannerRecord, BannersPort } from '../store/ports/banners.js';
import { FEED_LIMIT, feedBanner, toFeed, type FeedBanner } from './feed.js';
import { FeedClaims } from './feed-claims.js';
import type { BannerChange, BannerEvent, FeedSink } from './feed-events.js';
import { FeedFullError, FeedRefusal } from './feed-errors.js';

/** The hub's options, each defaulting to HUB_DEFAULTS. */
export interface HubOptions {
  /** How often the store's banners version is read; changes arrive within this. */
  pollMs?: number;
  /** Events kept for Last-Event-ID resumes; an older cursor gets a snapshot. */
  replayEvents?: number;
  /** A segment nobody follows is still tracked this long, so a reader that reconnects can resume. */
  lingerMs?: number;
  /**
   * Segments tracked at most, followed or lingering. Each is one store read per change:
   * without a bound, streams naming many distinct segments made every change that many
   * reads, holding the event loop and the feed's delivery promise with it.
   */
  maxSegments?: number;
  /**
   * Distinct segments one client (see feedClientKey) may follow at once, across all its
   * streams and subscriptions (default maxSegments shared among CLIENT_SHARES clients), so
   * that no one client can take the whole feed from everyone else.
   */
  segmentsPerClient?: number;
  now?: () => number;
  log?: Logger;
}

const HUB_DEFAULTS = { pollMs: 250, replayEvents: 1_024, lingerMs: 60_000, maxSegments: 1_000 } as const;
/** The default share of one client is maxSegments over this. */
const CLIENT_SHARES = 4;

/** Store reads between two yields to the event loop (SQLite reads are synchronous). */
const READS_PER_TURN = 64;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Segment {
  /** Active banners by id, as last read. */
  banners: Map<string, BannerRecord>;
  /** The seq from which this segment's every change is in the log. */
  trackedSince: number;
  followers: number;
  idleSince: number;
}

interface Subscription {
  segments: ReadonlySet<string>;
  sink: FeedSink;
  /** Ends every cursor this subscription is sent (see BannerEvent.cursor). */
  tag: string;
}

interface LoggedEvent {
  readonly seq: number;
  readonly change: BannerChange;
  readonly banner: FeedBanner;
}

export class BannerHub {
  readonly epoch = randomBytes(6).toString('hex');
  private seq = 0;
  private readonly segments = new Map<string, Segment>();
  private readonly subscriptions = new Set<Subscription>();
  private readonly events: LoggedEvent[] = [];
  private readonly claims: FeedClaims;
  private version: string | undefined;
  private nextExpiry = Infinity;
  /** Every read of the store and every (un)subscribe runs in this order, one at a time. */
  private queue: Promise<void> = Promise.resolve();
  private ticking = false;
  private nudged = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly pollMs: number;
  private readonly replayEvents: number;
  private readonly lingerMs: number;
  private readonly maxSegments: number;
  private readonly segmentsPerClient: number;
  private readonly now: () => number;

  constructor(
    private readonly store: BannersPort,
    private readonly options: HubOptions = {},
  ) {
    this.pollMs = options.pollMs ?? HUB_DEFAULTS.pollMs;
    this.replayEvents = options.replayEvents ?? HUB_DEFAULTS.replayEvents;
    this.lingerMs = options.lingerMs ?? HUB_DEFAULTS.lingerMs;
    this.maxSegments = options.maxSegments ?? HUB_DEFAULTS.maxSegments;
    this.segmentsPerClient = options.segmentsPerClient ?? Math.max(1, Math.floor(this.maxSegments / CLIENT_SHARES));
    this.claims = new FeedClaims({ maxSegments: this.maxSegments, segmentsPerClient: this.segmentsPerClient });
    this.now = options.now ?? Date.now;
  }

  get subscriberCount(): number {
    return this.subscriptions.size;
  }

  private cursor(seq: number, tag: string): string {
    return `${this.epoch}-${seq}-${tag}`;
  }

  /**
   * Reserves `audiences` for `client` (feedClientKey), synchronously; throws the refusal
   * when there is no room (see FeedClaims.claim). Returns the release. Every path into the
   * feed claims before it follows, so a claim's subscribe finds room.
   */
  claim(client: string, audiences: readonly string[]): () => void {
    return this.claims.claim(client, audiences);
  }

  /**
   * Follows `audiences` (parsed segment names). The sink first gets either the events after
   * `lastEventId` (when this hub still has all of them and it was issued for these same
   * segments) or a snapshot, then every change. With `client`, the segments are claimed
   * for it first (see claim; the refusal rejects at once). Resolves with the function that
   * ends the subscription.
   */
  async subscribe(audiences: readonly string[], sink: FeedSink, lastEventId?: string, client?: string): Promise<() => void> {
    const segments = new Set(audiences);
    const sub: Subscription = { segments, sink, tag: audienceTag(segments) };
    const unclaim = client === undefined ? () => {} : this.claim(client, audiences);
    await this.serial(async () => {
      const now = this.now();
      if (!this.makeRoom(sub.segments)) throw new FeedFullError(this.maxSegments);
      let reads = 0;
      for (const name of sub.segments) {
        if (++reads % READS_PER_TURN === 0) await nextTurn();
        let segment = this.segments.get(name);
        if (!segment) {
          // A cursor of its own: what changed while nobody followed it is in no log, so no
          // earlier cursor may resume over it.
          segment = { banners: await this.read(name, now), trackedSince: ++this.seq, followers: 0, idleSince: now };
          this.segments.set(name, segment);
          this.noteExpiries(segment);
        }
        segment.followers++;
      }
      const missed = this.replayAfter(lastEventId, sub);
      if (missed) for (const e of missed) sink.event(this.sent(e, sub));
      else sink.snapshot(this.snapshot(sub.segments), this.cursor(this.seq, sub.tag));
      this.subscriptions.add(sub);
    }).catch((err: unknown) => {
      unclaim();
      throw err;
    });
    this.startTimer();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      unclaim();
      this.subscriptions.delete(sub);
      const now = this.now();
      for (const name of sub.segments) {
        const segment = this.segments.get(name);
        if (segment && --segment.followers === 0) segment.idleSince = now;
      }
    };
  }

  /**
   * Whether `client` could follow `audiences` now: undefined, or the refusal subscribe would
   * give (for answering a HEAD without following anything).
   */
  refusalFor(audiences: readonly string[], client: string): FeedRefusal | undefined {
    try {
      this.claim(client, audiences)();
      return undefined;
    } catch (err) {
      if (err instanceof FeedRefusal) return err;
      throw err;
    }
  }

  /** Whether `audiences` can be followed now, by subscribers that claim nothing (tests). */
  hasRoomFor(audiences: readonly string[]): boolean {
    const names = new Set(audiences);
    let fresh = 0;
    for (const name of names) if (!this.segments.has(name)) fresh++;
    const over = this.segments.size + fresh - this.maxSegments;
    if (over <= 0) return true;
    let idle = 0;
    for (const [name, segment] of this.segments) if (this.evictable(name, segment) && !names.has(name)) idle++;
    return idle >= over;
  }

  /** Followed by no one and claimed by no one: a lingering segment that may be forgotten. */
  private evictable(name: string, segment: Segment): boolean {
    return segment.followers === 0 && !this.claims.has(name);
  }

  /** Room for the segments of `names` not tracked yet, forgetting lingering ones (oldest first) if need be. */
  private makeRoom(names: ReadonlySet<string>): boolean {
    let fresh = 0;
    for (const name of names) if (!this.segments.has(name)) fresh++;
    let over = this.segments.size + fresh - this.maxSegments;
    if (over <= 0) return true;
    const idle = [...this.segments]
      .filter(([name, s]) => this.evictable(name, s) && !names.has(name))
      .sort((a, b) => a[1].idleSince - b[1].idleSince);
    if (idle.length < over) return false;
    // Forgotten early, a segment's reader that reconnects gets a snapshot instead of a resume.
    for (const [name] of idle.slice(0, over)) this.segments.delete(name);
    return true;
  }

  /** The active banners of `audiences`, as GET /banners lists them, from what the hub holds. */
  snapshot(audiences: ReadonlySet<string>): FeedBanner[] {
    const rows: BannerRecord[] = [];
    for (const name of audiences) rows.push(...(this.segments.get(name)?.banners.values() ?? []));
    rows.sort((a, b) => b.created_at - a.created_at);
    return toFeed(rows).slice(0, FEED_LIMIT);
  }

  /** Reads the store now, after whatever read or subscribe is queued. */
  poll(): Promise<void> {
    return this.serial(() => this.tick());
  }

  /**
   * This process just wrote a banner: read now rather than at the next poll, so its own
   * changes reach its streams at once (one read queued at most, however many writes).
   */
  nudge(): void {
    if (this.nudged || this.segments.size === 0) return;
    this.nudged = true;
    void this.serial(async () => {
      this.nudged = false;
      await this.tick();
    }).catch((err: unknown) =>
      this.options.log?.warn('banner feed poll failed', { error: err instanceof Error ? err.message : String(err) }),
    );
  }

  /** Stops polling and forgets every segment and subscriber (the store is closing). */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.subscriptions.clear();
    this.segments.clear();
    this.claims.clear();
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => {});
    return run;
  }

  private startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      // A slow store must not pile reads up: at most one poll waits.
      if (this.ticking) return;
      this.ticking = true;
      this.poll()
        .catch((err: unknown) =>
          this.options.log?.warn('banner feed poll failed', { error: err instanceof Error ? err.message : String(err) }),
        )
        .finally(() => (this.ticking = false));
    }, this.pollMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const now = this.now();
    for (const [name, segment] of this.segments) {
      if (this.evictable(name, segment) && now - segment.idleSince >= this.lingerMs) this.segments.delete(name);
    }
    if (this.segments.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    // Before the rows, as FeedCache does: a write in between is seen again next time.
    const version = await this.store.bannersVersion();
    if (version === this.version && now < this.nextExpiry) return;
    // Every segment read before any is taken: a failed read leaves the version unseen, so the
    // next poll reads them all again instead of missing a change.
    const fresh = new Map<Segment, Map<string, BannerRecord>>();
    let reads = 0;
    for (const [name, segment] of this.segments) {
      // A turn for everyone else now and then: on SQLite each read runs synchronously.
      if (++reads % READS_PER_TURN === 0) await nextTurn();
      fresh.set(segment, await this.read(name, now));
    }
    this.version = version;
    this.nextExpiry = Infinity;
    for (const [segment, banners] of fresh) {
      this.diff(segment, banners, now);
      segment.banners = banners;
      this.noteExpiries(segment);
    }
  }

  private async read(segment: string, now: number): Promise<Map<string, BannerRecord>> {
    const rows = await this.store.listBanners({ audiences: [segment], status: 'active', now, limit: FEED_LIMIT });
    return new Map(rows.map((b) => [b.id, b]));
  }

  private noteExpiries(segment: Segment): void {
    for (const b of segment.banners.values()) if (b.expires_at !== null && b.expires_at < this.nextExpiry) this.nextExpiry = b.expires_at;
  }

  private diff(segment: Segment, fresh: Map<string, BannerRecord>, now: number): void {
    for (const [id, b] of segment.banners) {
      if (fresh.has(id)) continue;
      // Gone without a write of its own: expired. Otherwise dismissed (or purged, which only ended banners are).
      this.emit(b.expires_at !== null && b.expires_at <= now ? 'expired' : 'dismissed', b);
    }
    const shown = [...fresh.values()].filter((b) => !segment.banners.has(b.id)).sort((a, b) => a.created_at - b.created_at);
    for (const b of shown) this.emit('shown', b);
  }

  private emit(change: BannerChange, record: BannerRecord): void {
    const seq = ++this.seq;
    const event: LoggedEvent = { seq, change, banner: feedBanner(record) };
    this.events.push(event);
    if (this.events.length > this.replayEvents) this.events.splice(0, this.events.length - this.replayEvents);
    for (const sub of this.subscriptions) {
      if (sub.segments.has(record.audience)) sub.sink.event(this.sent(event, sub));
    }
  }

  /** `event` as `sub` receives it: with a cursor of its own segments. */
  private sent(event: LoggedEvent, sub: Subscription): BannerEvent {
    return { cursor: this.cursor(event.seq, sub.tag), change: event.change, banner: event.banner };
  }

  /** The events after `lastEventId` for `sub`'s segments, or undefined when a snapshot is needed. */
  private replayAfter(lastEventId: string | undefined, sub: Subscription): LoggedEvent[] | undefined {
    const segments = sub.segments;
    const m = /^([0-9a-f]+)-(\d+)-([0-9a-f]+)$/.exec(lastEventId ?? '');
    // Issued for other segments: what this reader holds of the ones it adds is unknown.
    if (!m || m[1] !== this.epoch || m[3] !== sub.tag) return undefined;
    const after = Number(m[2]);
    if (after > this.seq) return undefined;
    const oldest = this.events[0]?.seq ?? this.seq + 1;
    // Events after `after` must all still be in the log, and every segment followed since.
    if (after + 1 < oldest && after < this.seq) return undefined;
    for (const name of segments) if (this.segments.get(name)!.trackedSince > after) return undefined;
    return this.events.filter((e) => e.seq > after && segments.has(e.banner.audience));
  }
}

/** A short digest of a set of segment names, whatever their order. */
function audienceTag(segments: ReadonlySet<string>): string {
  return createHash('sha256')
    .update([...segments].sort().join(','))
    .digest('hex')
    .slice(0, 12);
}

const hubs = new WeakMap<BannersPort, BannerHub>();

/** Tells the process's hub for `store`, if it has one, that a banner was just written. */
export function bannersWritten(store: BannersPort): void {
  hubs.get(store)?.nudge();
}

/** The process's hub for `store`, made on first use with `options`; it polls only while followed. */
export function bannerHubFor(store: BannersPort, options?: HubOptions): BannerHub {
  let hub = hubs.get(store);
  if (!hub) {
    hub = new BannerHub(store, options);
    hubs.set(store, hub);
  }
  return hub;
}
