/** What the live banner feed sends its subscribers. */
import type { FeedBanner } from './feed.js';

export type BannerChange = 'shown' | 'dismissed' | 'expired';

export interface BannerEvent {
  /**
   * `<hub epoch>-<seq>-<audience tag>`: the SSE id; Last-Event-ID resumes after it. The tag
   * names the segments of the subscription it was sent to, so that a resume naming others
   * gets a snapshot rather than only the changes after a point it never saw them at.
   */
  readonly cursor: string;
  readonly change: BannerChange;
  readonly banner: FeedBanner;
}

/** What a subscriber receives, always synchronously and in order. */
export interface FeedSink {
  /** The whole state of the subscriber's segments as of `cursor`; replaces what it had. */
  snapshot(banners: FeedBanner[], cursor: string): void;
  event(event: BannerEvent): void;
}
