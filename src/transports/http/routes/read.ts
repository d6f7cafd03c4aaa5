/** What the read-only endpoints (/healthz, /metrics, /banners, /banners/stream) share. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpToken } from '../../../config/config.js';
import { sendJson } from '../banner-feed.js';
import type { RequestAuth } from '../request-auth.js';

/**
 * GET and HEAD only, then a token when NOTIFY_READ_AUTH=1. null: answered (405, 401, 403);
 * undefined: no token needed; else the token.
 */
export function admitRead(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  auth: RequestAuth,
  headers: Record<string, string> = {},
  queryToken?: string | null,
): HttpToken | null | undefined {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendJson(res, 405, { error: { code: 'METHOD_NOT_ALLOWED', message: `${path} is read-only` } }, { Allow: 'GET, HEAD' });
    return null;
  }
  return auth.authenticate(req, res, false, queryToken, headers);
}
