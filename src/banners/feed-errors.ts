/**
 * Every refusal of the banner feed, in one file: a malformed or too long `audience` (GET
 * /banners, /banners/stream, the widget's demo page), and a follower the live feed has no
 * room for (the hub's segments, the transport's open streams). The same codes on every path
 * into the feed: HTTP (`{"error":{code,message,retry_after_s?}}` with `status`), MCP (a
 * JSON-RPC error whose `data` carries the code).
 */
import { describeValue } from '@notify-mcp/union';
import { errors, type NotifyError } from '../core/errors.js';

/** An `audience` name that is not a segment name (parseAudienceParam): INVALID_FIELD at /audience. */
export function invalidAudience(name: string): NotifyError {
  return errors.invalidField(
    `audience ${describeValue(name)} is not a segment name: use 1-64 of a-z 0-9 : _ -, starting with a letter or digit, comma-separated.`,
    { path: '/audience' },
  );
}

/** An `audience` query naming more segments than any viewer belongs to: TOO_LONG at /audience. */
export function tooManyAudiences(named: number, max: number): NotifyError {
  return errors.tooLong(`audience names ${named} segments; name at most ${max}, the ones the viewer belongs to.`, { path: '/audience' });
}

/** The feed refused a new follower (or a subscription named too many segments). */
export abstract class FeedRefusal extends Error {
  abstract readonly code: 'FEED_FULL' | 'FEED_CLIENT_LIMIT' | 'TOO_MANY_STREAMS' | 'TOO_LONG';
  /** The HTTP status of the SSE refusal. */
  abstract readonly status: number;
  abstract readonly retryAfterS: number | undefined;

  body(): { code: string; message: string; retry_after_s?: number } {
    return { code: this.code, message: this.message, ...(this.retryAfterS === undefined ? {} : { retry_after_s: this.retryAfterS }) };
  }
}

/** The hub tracks its maximum of segments: a new follower of others must wait (or name fewer). */
export class FeedFullError extends FeedRefusal {
  override readonly name = 'FeedFullError';
  readonly code = 'FEED_FULL';
  readonly status = 503;
  readonly retryAfterS = 5;
  constructor(readonly maxSegments: number) {
    super(
      `The live feed follows its maximum of ${maxSegments} audience segments: retry later, or name only the segments the viewer belongs to`,
    );
  }
}

/** This client already follows its share of segments: it must end one of its streams or subscriptions first. */
export class FeedShareError extends FeedRefusal {
  override readonly name = 'FeedShareError';
  readonly code = 'FEED_CLIENT_LIMIT';
  readonly status = 429;
  readonly retryAfterS = 5;
  constructor(readonly segmentsPerClient: number) {
    super(
      `This client already follows ${segmentsPerClient} distinct audience segments, its share of the live feed: end a stream or subscription it holds, or name only the segments the viewer belongs to`,
    );
  }
}

/** One subscription named more segments than any viewer belongs to. */
export class FeedRequestTooLongError extends FeedRefusal {
  override readonly name = 'FeedRequestTooLongError';
  readonly code = 'TOO_LONG';
  readonly status = 400;
  readonly retryAfterS = undefined;
  constructor(named: number, max: number) {
    super(`The request names ${named} banner segments; name at most ${max}, the ones the viewer belongs to.`);
  }
}

/**
 * This client already holds its share of the open streams. (Moved here from
 * transports/http/banner-stream.ts, which still defines its own copy until it imports this one.)
 */
export class StreamShareError extends FeedRefusal {
  override readonly name = 'StreamShareError';
  readonly code = 'FEED_CLIENT_LIMIT';
  readonly status = 429;
  readonly retryAfterS = 5;
  constructor(readonly streamsPerClient: number) {
    super(
      `This client already holds ${streamsPerClient} open streams of the live feed, its share (NOTIFY_FEED_CLIENT_STREAMS): end one (a /banners/stream or a subscriptions/listen) first, or share one stream among the viewers of a page`,
    );
  }
}

/** The process holds its maximum of open streams. (The same move as StreamShareError.) */
export class TooManyStreamsError extends FeedRefusal {
  override readonly name = 'TooManyStreamsError';
  readonly code = 'TOO_MANY_STREAMS';
  readonly status = 503;
  readonly retryAfterS = 5;
  constructor(readonly maxStreams: number) {
    super(`This server holds its maximum of ${maxStreams} open streams: retry later, or raise NOTIFY_FEED_MAX_STREAMS`);
  }
}
