/**
 * GET /banners/stream?audience=all,admins: the banner feed as Server-Sent Events (a snapshot,
 * then each change, resumed from Last-Event-ID), its event format in docs/tools.md, "Live
 * banner feed (SSE)". Each refusal comes before any byte of the stream (serveBannerStream).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FeedRefusal, type BannerEvent, type BannerHub } from '../../banners/hub.js';
import { audiencesOf, sendJson } from './banner-feed.js';

export interface StreamLimits {
  /** Open streams this process serves at most; more get 503 (NOTIFY_FEED_MAX_STREAMS). */
  maxStreams: number;
  /** A `: ping` comment this often, so proxies keep the stream open (default 15 s). */
  heartbeatMs: number;
  /** The reconnect delay the `retry:` line asks of EventSource (default 2 s). */
  retryMs: number;
  /** A reader whose unsent bytes exceed this is dropped; it reconnects and resumes (default 256 KiB). */
  maxBufferedBytes: number;
}

export const DEFAULT_STREAM_LIMITS: Omit<StreamLimits, 'maxStreams'> = {
  heartbeatMs: 15_000,
  retryMs: 2_000,
  maxBufferedBytes: 256 * 1024,
};

/** The open streams of one HTTP server, so that shutdown can end them. */
export class OpenStreams {
  private readonly open = new Set<ServerResponse>();

  get size(): number {
    return this.open.size;
  }

  add(res: ServerResponse): void {
    this.open.add(res);
    res.once('close', () => this.open.delete(res));
  }

  /** Ends every stream cleanly (the reader sees the end of the body and reconnects elsewhere). */
  endAll(): void {
    for (const res of this.open) res.end();
    this.open.clear();
  }
}

/**
 * Last-Event-ID (header, or `last_event_id` in the query for readers that reconnect with a
 * new EventSource) resumes: the missed events, or a snapshot when they are not kept or the
 * cursor was issued for other segments. Refused as `{"error":{code,message,retry_after_s?}}`:
 * 400 for a malformed audience or more than 32 segments, 429 FEED_CLIENT_LIMIT when this
 * client already follows its share of segments, 503 FEED_FULL when the hub follows its
 * maximum, 503 TOO_MANY_STREAMS past NOTIFY_FEED_MAX_STREAMS.
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
  if (deps.streams.size >= limits.maxStreams) {
    return sendJson(
      res,
      503,
      { error: { code: 'TOO_MANY_STREAMS', message: `This server holds its maximum of ${limits.maxStreams} open streams: retry later, or raise NOTIFY_FEED_MAX_STREAMS` } },
      { ...deps.headers, 'Retry-After': '5' },
    );
  }
  const refuse = (refusal: FeedRefusal) =>
    sendJson(res, refusal.status, { error: refusal.body() }, { ...deps.headers, ...(refusal.retryAfterS === undefined ? {} : { 'Retry-After': String(refusal.retryAfterS) }) });
  const okHeaders = {
    ...deps.headers,
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    // nginx buffers responses unless told not to.
    'X-Accel-Buffering': 'no',
  };
  if (req.method === 'HEAD') {
    const refusal = deps.hub.refusalFor(audiences, deps.client);
    if (refusal) return refuse(refusal);
    return void res.writeHead(200, okHeaders).end();
  }
  // Counted from here, so that streams still subscribing cannot overshoot the cap.
  deps.streams.add(res);

  // Until the hub admits the stream nothing is sent: a refusal is still a coded answer.
  let pending: string[] | undefined = [];
  const write = (text: string) => {
    if (pending) return void pending.push(text);
    if (res.writableEnded || res.destroyed) return;
    res.write(text);
    // A reader that does not read would make us hold every event for it: drop it instead.
    if (res.writableLength > limits.maxBufferedBytes) res.destroy();
  };
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
    sub = await deps.hub.subscribe(
      audiences,
      {
        snapshot: (banners, cursor) => write(`event: snapshot\nid: ${cursor}\ndata: ${JSON.stringify({ banners })}\n\n`),
        event: (e: BannerEvent) => write(`event: banner\nid: ${e.cursor}\ndata: ${JSON.stringify({ change: e.change, banner: e.banner })}\n\n`),
      },
      lastEventId,
      deps.client,
    );
  } catch (err) {
    if (err instanceof FeedRefusal) return closed ? undefined : refuse(err);
    throw err;
  }
  if (closed) return sub();
  unsubscribe = sub;
  res.writeHead(200, okHeaders);
  res.socket?.setNoDelay(true);
  const admitted = pending;
  pending = undefined;
  write(`retry: ${limits.retryMs}\n\n`);
  for (const text of admitted) write(text);
  heartbeat = setInterval(() => write(': ping\n\n'), limits.heartbeatMs);
  heartbeat.unref();
}

function firstOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
