/**
 * Who a request is, by its bearer token: tool tokens (NOTIFY_HTTP_TOKENS) on /mcp, and on
 * the read endpoints when NOTIFY_READ_AUTH=1, where a feed token (NOTIFY_FEED_TOKENS) also
 * reads; a feed token on /mcp is refused.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpToken } from '../../config/config.js';
import { challenge, createAuthenticator } from './auth.js';
import { sendJson } from './banner-feed.js';

export const jsonRpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

export interface RequestAuth {
  /** Tool tokens are configured, so /mcp needs one. */
  readonly required: boolean;
  /**
   * null: answered (401/403). undefined: no token needed. Reads take a tool token or a feed
   * token; `queryToken` (the stream's ?access_token=) only a feed token, so that no token
   * that can call tools ends up in URLs and access logs. `headers`: the feed's CORS grant,
   * so that a browser app can read why it was refused.
   */
  authenticate(
    req: IncomingMessage,
    res: ServerResponse,
    mcp: boolean,
    queryToken?: string | null,
    headers?: Record<string, string>,
  ): HttpToken | null | undefined;
  /** A valid token sent where none is needed still names its client (its own share of the feed). */
  presentedClient(req: IncomingMessage): string | undefined;
}

export function createRequestAuth(settings: {
  tokens: readonly HttpToken[];
  feedTokens: readonly HttpToken[];
  readAuth: boolean;
}): RequestAuth {
  const auth = createAuthenticator(settings.tokens);
  // Read-only tokens: accepted where NOTIFY_READ_AUTH asks for one, refused on /mcp.
  const feedAuth = createAuthenticator(settings.feedTokens);

  const unauthorized = (res: ServerResponse, reason: 'missing' | 'invalid', mcp: boolean, headers: Record<string, string> = {}) => {
    const message = reason === 'missing' ? 'Authorization: Bearer <token> is required' : 'The bearer token is not valid';
    sendJson(res, 401, mcp ? jsonRpcError(-32001, message) : { error: { code: 'UNAUTHORIZED', message } }, {
      ...headers,
      'WWW-Authenticate': challenge(reason),
    });
  };

  return {
    required: auth.required,
    authenticate(req, res, mcp, queryToken, headers) {
      const needed = mcp ? auth.required : settings.readAuth;
      if (!needed) return undefined;
      if (!mcp && queryToken && !req.headers.authorization) {
        const viaQuery = feedAuth.check(`Bearer ${queryToken}`);
        if (viaQuery.ok) return viaQuery.token;
        unauthorized(res, 'invalid', false, headers);
        return null;
      }
      const result = auth.check(req.headers.authorization);
      if (result.ok) return result.token;
      const feed = result.reason === 'invalid' ? feedAuth.check(req.headers.authorization) : result;
      if (feed.ok && !mcp) return feed.token;
      if (feed.ok) {
        sendJson(
          res,
          403,
          jsonRpcError(-32001, 'This is a read-only feed token (NOTIFY_FEED_TOKENS): call tools with a NOTIFY_HTTP_TOKENS token'),
        );
        return null;
      }
      unauthorized(res, result.reason, mcp, headers);
      return null;
    },
    presentedClient(req) {
      const tool = auth.check(req.headers.authorization);
      if (tool.ok) return tool.token.client;
      const feed = feedAuth.check(req.headers.authorization);
      return feed.ok ? feed.token.client : undefined;
    },
  };
}
