/**
 * CORS for the read-only feed (GET /banners, /banners/stream, /widget.js), so browser apps
 * on other origins can read it: only origins listed in NOTIFY_FEED_ORIGINS (`*` only when
 * listed), never /mcp, whose Origin check stays strict (DNS rebinding).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface FeedCors {
  /** Headers to add to a feed response for this request (none for an origin not listed). */
  headers(req: IncomingMessage): Record<string, string>;
  /** Answers a preflight (OPTIONS): 204 with the grant, or 403 for an origin not listed. */
  preflight(req: IncomingMessage, res: ServerResponse): void;
}

/** Request headers a feed reader may send from another origin. */
const ALLOWED_HEADERS = 'Authorization, Last-Event-ID, If-None-Match, Cache-Control';

export function createFeedCors(origins: readonly string[]): FeedCors {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  const grant = (origin: string | undefined): string | undefined => {
    if (!origin) return undefined;
    if (any) return '*';
    return allowed.has(origin.toLowerCase()) ? origin : undefined;
  };
  return {
    headers(req): Record<string, string> {
      const origin = grant(req.headers.origin);
      // Vary even when refused: a cache must not hand one origin's answer to another.
      const vary: Record<string, string> = any || allowed.size === 0 ? {} : { Vary: 'Origin' };
      if (!origin) return vary;
      return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': 'ETag, Retry-After', ...vary };
    },
    preflight(req, res) {
      const origin = grant(req.headers.origin);
      if (!origin) {
        res.writeHead(403, { 'Content-Type': 'application/json; charset=utf-8', Vary: 'Origin' });
        res.end(
          JSON.stringify({
            error: {
              code: 'FORBIDDEN_ORIGIN',
              message: 'This origin may not read the feed: add it to NOTIFY_FEED_ORIGINS, e.g. https://app.example.com',
            },
          }),
        );
        return;
      }
      res.writeHead(204, {
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
        'Access-Control-Allow-Headers': ALLOWED_HEADERS,
        'Access-Control-Max-Age': '600',
        ...(any ? {} : { Vary: 'Origin' }),
      });
      res.end();
    },
  };
}
