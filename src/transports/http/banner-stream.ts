/**
 * GET /banners/stream?audience=all,admins: the banner feed as Server-Sent Events (a snapshot,
 * then each change, resumed from Last-Event-ID), its event format in docs/tools.md, "Live
 * banner feed (SSE)". Each refusal comes before any byte of the stream (serveBannerStream).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FeedRefusal, StreamShareError, TooManyStreamsError } from '../../banners/feed-errors.js';
import type { FeedSink } from '../../banners/feed-events.js';
import type { BannerHub } from '../../banners/hub.js';
import { audiencesOf, sendJson } from './banner-feed.js';

export interface StreamLimits {
  /** Open streams this process serves at most; more get 503 (NOTIFY_FEED_MAX_STREAMS). */
  maxStreams: number;
  /** Open streams one client (feedClientKey) may hold; more get 429 (NOTIFY_FEED_CLIENT_STREAMS). */
  streamsPerClient: number;
  /** A `: ping` comment this often, so proxies keep the stream open. */
  heartbeatMs: number;
  /** The reconnect delay the `retry:` line asks of EventSource. */
  retryMs: number;
  /** A reader whose unsent bytes exceed this is dropped; it reconnects and resumes. */
  maxBufferedBytes: number;
}

export const DEFAULT_STREAM_LIMITS: Omit<StreamLimits, 'maxStreams' | 'streamsPerClient'> = {
  heartbeatMs: 15_000,
  retryMs: 2_000,
  maxBufferedBytes: 256 * 1024,
};

/**
 * The open feed streams of one HTTP server, every path that holds one (GET /banners/stream,
 * 2026-07-28 subscriptions/listen), counted per client, so that no one client can take the
 * process's capacity; and the SSE ones, so that shutdown can end them.
 */
export class OpenStreams {
  private readonly sse = new Set<ServerResponse>();
  private readonly perClient = new Map<string, number>();
  private held = 0;

  constructor(private readonly caps: Pick<StreamLimits, 'maxStreams' | 'streamsPerClient'>) {}

  /** Open GET /banners/stream responses. */
  get size(): number {
    return this.sse.size;
  }

  /** The refusal a new stream of `client` would get now, or undefined: a full process first, then the client's share. */
  refusalFor(client: string): FeedRefusal | undefined {
    if (this.held >= this.caps.maxStreams) return new TooManyStreamsError(this.caps.maxStreams);
    if ((this.perClient.get(client) ?? 0) >= this.caps.streamsPerClient) return new StreamShareError(this.caps.streamsPerClient);
    return undefined;
  }

  /**
   * Counts `res` as one of `client`'s open streams until it closes or the returned release
   * is called; throws the refusal (see refusalFor) instead when there is no room. `sse`: a
   * stream this server writes itself, which endAll ends.
   */
  hold(res: ServerResponse, client: string, sse: boolean): () => void {
    const refusal = this.refusalFor(client);
    if (refusal) throw refusal;
    this.held++;
    this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1);
    if (sse) this.sse.add(res);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.held--;
      const n = this.perClient.get(client)! - 1;
      if (n > 0) this.perClient.set(client, n);
      else this.perClient.delete(client);
      this.sse.delete(res);
    };
    res.once('close', release);
    return release;
  }

  /** Ends every SSE stream cleanly (the reader sees the end of the body and reconnects elsewhere). */
  endAll(): void {
    for (const res of this.sse) res.end();
    this.sse.clear();
  }
}

/**
 * Last-Event-ID (header, or `last_event_id` in the query for readers that reconnect with a
 * new EventSource) resumes: the missed events, or a snapshot when they are not kept or the
 * cursor was issued for other segments. Refused as `{"error":{code,message,retry_after_s?}}`:
 * 400 for a malformed audience or more than MAX_AUDIENCES segments, 429 FEED_CLIENT_LIMIT when this
 * client already holds its share of open streams (NOTIFY_FEED_CLIENT_STREAMS) or follows
 * its share of segments, 503 TOO_MANY_STREAMS when the process holds NOTIFY_FEED_MAX_STREAMS
 * (before any share is looked at), 503 FEED_FULL when the hub follows its maximum.
 */
export async function serveBannerStream(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  deps: {
    hub: BannerHub;
    streams: OpenStreams;
    limits: StreamLimits;
    headers: Record<string, string>;
    /** Whose share of the feed this stream takes (feedClientKey). */
    client: string;
  },
): Promise<void> {
  const audiences = audiencesOf(url, res, deps.headers);
  if (!audiences) return;
  const { limits } = deps;
  const refuse = (refusal: FeedRefusal) => sendRefusal(res, refusal, deps.headers);
  const okHeaders = streamHeaders(deps.headers);
  if (req.method === 'HEAD') {
    const refusal = deps.streams.refusalFor(deps.client) ?? deps.hub.refusalFor(audiences, deps.client);
    if (refusal) return refuse(refusal);
    return void res.writeHead(200, okHeaders).end();
  }
  // Counted from here, so that streams still subscribing cannot overshoot the caps.
  try {
    deps.streams.hold(res, deps.client, true);
  } catch (err) {
    if (err instanceof FeedRefusal) return refuse(err);
    throw err;
  }

  const out = heldWriter(res, limits.maxBufferedBytes);
  let heartbeat: NodeJS.Timeout | undefined;
  const lastEventId = firstOf(req.headers['last-event-id']) ?? url.searchParams.get('last_event_id') ?? undefined;
  let unsubscribe: (() => void) | undefined;
  let closed = false;
  res.once('close', () => {
    closed = true;
    clearInterval(heartbeat);
    unsubscribe?.();
  });
  let sub: () => void;
  try {
    sub = await deps.hub.subscribe(audiences, sseEvents(out.write), lastEventId, deps.client);
  } catch (err) {
    if (err instanceof FeedRefusal) return closed ? undefined : refuse(err);
    throw err;
  }
  if (closed) return sub();
  unsubscribe = sub;
  res.writeHead(200, okHeaders);
  res.socket?.setNoDelay(true);
  out.admit(`retry: ${limits.retryMs}\n\n`);
  heartbeat = setInterval(() => out.write(': ping\n\n'), limits.heartbeatMs);
  heartbeat.unref();
}

/** A coded refusal, before any byte of the stream. */
function sendRefusal(res: ServerResponse, refusal: FeedRefusal, headers: Record<string, string>): void {
  sendJson(
    res,
    refusal.status,
    { error: refusal.body() },
    { ...headers, ...(refusal.retryAfterS === undefined ? {} : { 'Retry-After': String(refusal.retryAfterS) }) },
  );
}

function streamHeaders(headers: Record<string, string>): Record<string, string> {
  return {
    ...headers,
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    // nginx buffers responses unless told not to.
    'X-Accel-Buffering': 'no',
  };
}

/**
 * Writes to one reader, holding every text until `admit`: until the hub admits the stream
 * nothing is sent, so a refusal is still a coded answer. `admit` writes its text first, then
 * what was held.
 */
function heldWriter(res: ServerResponse, maxBufferedBytes: number): { write(text: string): void; admit(first: string): void } {
  let pending: string[] | undefined = [];
  const write = (text: string) => {
    if (pending) return void pending.push(text);
    if (res.writableEnded || res.destroyed) return;
    res.write(text);
    // A reader that does not read would make us hold every event for it: drop it instead.
    if (res.writableLength > maxBufferedBytes) res.destroy();
  };
  const admit = (first: string) => {
    const admitted = pending ?? [];
    pending = undefined;
    write(first);
    for (const text of admitted) write(text);
  };
  return { write, admit };
}

/** The hub's snapshot and changes as SSE events. */
function sseEvents(write: (text: string) => void): FeedSink {
  return {
    snapshot: (banners, cursor) => write(`event: snapshot\nid: ${cursor}\ndata: ${JSON.stringify({ banners })}\n\n`),
    event: (e) => write(`event: banner\nid: ${e.cursor}\ndata: ${JSON.stringify({ change: e.change, banner: e.banner })}\n\n`),
  };
}

function firstOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
