/**
 * GET /banners?audience=all,admins: the active banners apps show, as JSON, with an ETag
 * and a short max-age so that apps polling every few seconds mostly get 304s.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { feedCacheFor, parseAudienceParam } from '../../banners/feed.js';
import { NotifyError } from '../../core/errors.js';
import type { Store } from '../../store/types.js';

/** Seconds an app may reuse a feed without asking; a dismissed banner lingers at most this long. */
export const FEED_MAX_AGE_S = 5;

export async function serveBannerFeed(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  deps: { store: Store; now: () => number; privateCache: boolean; headers?: Record<string, string> },
): Promise<void> {
  const audiences = audiencesOf(url, res, deps.headers);
  if (!audiences) return;
  // Cached per audience list, validated against the store on every request (src/banners/feed.ts).
  const { body, etag } = await feedCacheFor(deps.store).render(audiences, deps.now());
  const vary = [deps.headers?.Vary, deps.privateCache ? 'Authorization' : undefined].filter(Boolean).join(', ');
  const headers = {
    ...deps.headers,
    ETag: etag,
    'Cache-Control': `${deps.privateCache ? 'private' : 'public'}, max-age=${FEED_MAX_AGE_S}`,
    ...(vary ? { Vary: vary } : {}),
  };
  if (etagMatches(req.headers['if-none-match'], etag)) {
    res.writeHead(304, headers).end();
    return;
  }
  sendJson(res, 200, body, headers);
}

/** The `audience` list of a feed request, or undefined once a malformed one got its 400. */
export function audiencesOf(url: URL, res: ServerResponse, headers?: Record<string, string>): string[] | undefined {
  try {
    return parseAudienceParam(url.searchParams.get('audience'));
  } catch (err) {
    if (!(err instanceof NotifyError)) throw err;
    sendJson(res, 400, { error: err.toBody() }, headers);
    return undefined;
  }
}

/** If-None-Match: `*`, or a list of tags compared weakly (RFC 9110 13.1.2). */
function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** `body`: JSON text or bytes as they are, or a value to serialise. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(text);
}
