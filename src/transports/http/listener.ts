/**
 * Streamable HTTP for ops bots, on node:http, both protocol eras on one
 * endpoint. What stands in front (Host and Origin checks, bearer tokens, the 1 MiB body
 * bound, the message screen of inbound.ts, shutdown drain) is ours and applies to both;
 * then the SDK's own classifier
 * (isLegacyRequest) splits the traffic:
 *
 *   2026-07-28   stateless: createMcpHandler builds one server per request and checks the
 *                MCP-Protocol-Version / Mcp-Method / Mcp-Name headers against the body
 *   2025-11-25   sessions: one server per session (WebStandardStreamableHTTPServerTransport),
 *                so each keeps its handshake's clientInfo, bound to credential and path
 *
 *   POST|GET|DELETE /mcp, /mcp/<profile>   MCP; Bearer token when NOTIFY_HTTP_TOKENS is set
 *   GET /healthz, /metrics, /banners        read-only; token only with NOTIFY_READ_AUTH=1
 *   POST /webhooks/<provider>               provider receipts; the provider's signature, no token
 *   GET /banners/stream                     the feed as SSE (banner-stream.ts); same rule, and a
 *                                           feed token may come as ?access_token= (EventSource
 *                                           cannot send headers)
 *   OPTIONS on the feed paths               CORS preflight (NOTIFY_FEED_ORIGINS)
 *   GET /widget.js, /                       the banner widget and its demo page; static, never a token
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { App } from '../../mcp/server.js';
import { ConfigError, PROFILES, type Config, type HttpToken, type Profile } from '../../config/config.js';
import type { Logger } from '../../core/log.js';
import { createMetrics, type Metrics } from '../../mcp/metrics.js';
import { createServer, type Connection } from '../../mcp/server.js';
import { challenge, createAuthenticator } from './auth.js';
import { feedRefusalMessage, listenedUris, ResourceWatch } from '../../mcp/resources.js';
import { bannerHubFor, FeedRefusal, feedClientKey, type HubOptions } from '../../banners/hub.js';
import { loadWidgetAssets } from '../../banners/widget/assets.js';
import { sendJson, serveBannerFeed } from './banner-feed.js';
import { DEFAULT_STREAM_LIMITS, OpenStreams, serveBannerStream, type StreamLimits } from './banner-stream.js';
import { createFeedCors } from './cors.js';
import { DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT } from './defaults.js';
import { BodyTooLargeError, MAX_BODY_BYTES, readBody } from '../body.js';
import { createHostPolicy, hostRefusal, isLoopbackHost, originRefusal } from './host-check.js';
import { plural } from '../../core/words.js';
import { StoreUnavailableError } from '../../store/errors.js';
import { parseMessage, screenMessage } from '../inbound.js';
import { lenientHeaders, namesModernVersion } from './protocol-headers.js';
import { SessionRegistry, type Session } from './sessions.js';
import { sendWebResponse, toWebRequest } from './web-bridge.js';
import { serveWebhook, WEBHOOK_ROUTE } from './webhooks.js';

export interface HttpOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** A 2025-era session with no request for this long is closed (default 30 min). */
  sessionIdleMs?: number;
  maxSessions?: number;
  /** Sessions one token may hold (default 100), so one client cannot take them all. */
  maxSessionsPerClient?: number;
  maxBodyBytes?: number;
  /** Extra Host names to accept (a reverse proxy's public name), on any port. */
  allowedHosts?: string[];
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** The idle keep-alive time advertised to clients (default 5 s); the socket is held KEEP_ALIVE_GRACE_MS longer. */
  keepAliveTimeoutMs?: number;
  /** Bound on waiting for in-flight requests at shutdown (default: the send budget + 2 s). */
  shutdownMs?: number;
  /** The banner stream's timings and bounds (tests shorten them); maxStreams defaults to NOTIFY_FEED_MAX_STREAMS. */
  stream?: Partial<StreamLimits> & Pick<HubOptions, 'pollMs'>;
}

export interface HttpHandle {
  host: string;
  port: number;
  /** Base URL, e.g. http://127.0.0.1:8787 (the MCP endpoint is `${url}/mcp`). */
  url: string;
  metrics: Metrics;
  /** Open 2025-era sessions (2026-07-28 traffic has none). */
  sessionCount(): number;
  /** Open GET /banners/stream responses. */
  streamCount(): number;
  /** Stops accepting, lets in-flight requests finish (bounded), closes every session. */
  close(): Promise<void>;
}

export { DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT };

/** Without tokens the server has no authentication, so it serves loopback only. */
export function assertBindable(config: Pick<Config, 'http'>, host: string): void {
  if (config.http.tokens.length === 0 && !isLoopbackHost(host)) {
    throw new ConfigError(
      `refusing to serve HTTP on ${host} without authentication: set NOTIFY_HTTP_TOKENS (client:token[:profile], ` +
        `tokens of 16+ characters from [A-Za-z0-9._~-]) or bind to 127.0.0.1`,
    );
  }
}

type Route = 'mcp' | 'healthz' | 'metrics' | 'banners' | 'banners_stream' | 'webhook' | 'widget' | 'other';

/** Paths a browser app on another origin may read (CORS through NOTIFY_FEED_ORIGINS). */
const FEED_PATHS = new Set(['/banners', '/banners/stream', '/widget.js']);

const jsonRpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

export async function serveHttp(app: App, options: HttpOptions = {}, log: Logger = app.log): Promise<HttpHandle> {
  const host = options.host ?? DEFAULT_HTTP_HOST;
  assertBindable(app.config, host);
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const maxSessions = options.maxSessions ?? 1_000;
  const maxPerClient = options.maxSessionsPerClient ?? 100;
  const shutdownMs = options.shutdownMs ?? app.config.sendBudgetMs + 2_000;
  const auth = createAuthenticator(app.config.http.tokens);
  // Read-only tokens: accepted where NOTIFY_READ_AUTH asks for one, refused on /mcp.
  const feedAuth = createAuthenticator(app.config.feed.tokens);
  const cors = createFeedCors(app.config.feed.origins);
  const streams = new OpenStreams();
  const { pollMs, ...streamLimits } = options.stream ?? {};
  const limits: StreamLimits = { ...DEFAULT_STREAM_LIMITS, maxStreams: app.config.feed.maxStreams, ...streamLimits };
  const hub = bannerHubFor(app.store, { pollMs, log });
  const metrics = createMetrics({ channels: app.channels.map((c) => c.name) });
  const widget = loadWidgetAssets();
  const knownTools = new Set(Object.values(app.catalog).flatMap((c) => c.tools.map((t) => t.name)));
  const sessions = new SessionRegistry({
    idleMs: options.sessionIdleMs ?? 30 * 60_000,
    log,
    onCountChange: (n) => metrics.activeSessions.set(n),
  });
  if (app.config.http.readAuth && !auth.required && !feedAuth.required) {
    log.warn('NOTIFY_READ_AUTH=1 but NOTIFY_HTTP_TOKENS and NOTIFY_FEED_TOKENS are empty: read endpoints refuse every request');
  }

  let closing = false;
  let inflightPosts = 0;
  /** The clients of sessions being opened (initialize answered, not yet registered). */
  const opening: (string | undefined)[] = [];
  let idle: (() => void) | undefined;
  let hostPolicy = createHostPolicy({ host, port: options.port ?? DEFAULT_HTTP_PORT }, options.allowedHosts);

  /** `headers`: the feed's CORS grant, so that a browser app can read why it was refused. */
  const unauthorized = (res: ServerResponse, reason: 'missing' | 'invalid', mcp: boolean, headers: Record<string, string> = {}) => {
    const message = reason === 'missing' ? 'Authorization: Bearer <token> is required' : 'The bearer token is not valid';
    sendJson(res, 401, mcp ? jsonRpcError(-32001, message) : { error: { code: 'UNAUTHORIZED', message } }, {
      ...headers,
      'WWW-Authenticate': challenge(reason),
    });
  };

  /**
   * null: answered (401/403). undefined: no token needed. Reads take a tool token or a feed
   * token; `queryToken` (the stream's ?access_token=) only a feed token, so that no token
   * that can call tools ends up in URLs and access logs.
   */
  const authenticate = (
    req: IncomingMessage,
    res: ServerResponse,
    mcp: boolean,
    queryToken?: string | null,
    headers?: Record<string, string>,
  ): HttpToken | null | undefined => {
    const needed = mcp ? auth.required : app.config.http.readAuth;
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
      sendJson(res, 403, jsonRpcError(-32001, 'This is a read-only feed token (NOTIFY_FEED_TOKENS): call tools with a NOTIFY_HTTP_TOKENS token'));
      return null;
    }
    unauthorized(res, result.reason, mcp, headers);
    return null;
  };

  /** A valid token sent where none is needed still names its client (its own share of the feed). */
  const presentedClient = (req: IncomingMessage): string | undefined => {
    const tool = auth.check(req.headers.authorization);
    if (tool.ok) return tool.token.client;
    const feed = feedAuth.check(req.headers.authorization);
    return feed.ok ? feed.token.client : undefined;
  };

  /** What a server instance needs to know about the request it answers. */
  const connectionFor = (token: HttpToken | undefined, endpointProfile: Profile | undefined, req: IncomingMessage): Connection => ({
    credentialProfile: token?.profile,
    endpointProfile,
    client: token?.client,
    feedClient: feedClientKey(token?.client, req.socket.remoteAddress),
    log: token ? log.child({ client: token.client }) : log,
    observeCall: metrics.observeCall(knownTools),
  });

  // 2026-07-28: one server per request. Legacy traffic never reaches it (routed below), so
  // `reject` keeps the SDK's stateless 2025 fallback, which would lose the handshake, out.
  const requestConnections = new WeakMap<Request, Connection>();
  const modern = createMcpHandler(
    ({ era, requestInfo }) => createServer(app, (requestInfo && requestConnections.get(requestInfo)) ?? {}, era),
    {
      legacy: 'reject',
      maxRequestBodySize: maxBody,
      onerror: (error) => log.debug('mcp request refused', { error: error.message }),
    },
  );

  // 2026-07-28 resource subscriptions: the SDK answers subscriptions/listen itself; we watch
  // the URIs a listen names while its response is open and publish their updates to it.
  const listenWatch = new ResourceWatch(hub, (uri) => modern.notify.resourceUpdated(uri));

  const handleMcp = async (req: IncomingMessage, res: ServerResponse, path: string, endpointProfile: Profile | undefined) => {
    if (!hostPolicy.originAllowed(req.headers.origin)) {
      return sendJson(res, 403, jsonRpcError(-32000, `Forbidden: ${originRefusal(req.headers.origin)}`));
    }
    const token = authenticate(req, res, true);
    if (token === null) return;

    let parsed: unknown;
    if (req.method === 'POST') {
      try {
        const read = parseMessage(await readBody(req, maxBody));
        if (read.refusal) return sendJson(res, 400, { jsonrpc: '2.0', id: null, error: read.refusal.error });
        parsed = read.value;
      } catch (err) {
        if (err instanceof BodyTooLargeError) {
          return sendJson(res, 413, jsonRpcError(-32000, `Request body over ${maxBody} bytes`), { Connection: 'close' });
        }
        throw err;
      }
      const screened = screenMessage(parsed);
      if (screened.refusal) {
        log.debug('mcp message refused', { reason: screened.refusal.reason });
        return sendJson(res, 400, { jsonrpc: '2.0', id: screened.refusal.id, error: screened.refusal.error });
      }
      parsed = screened.message;
    } else if (req.method !== 'GET' && req.method !== 'DELETE') {
      return sendJson(res, 405, jsonRpcError(-32000, 'Method not allowed'), { Allow: 'GET, POST, DELETE' });
    }

    const request = toWebRequest(req, res, req.method === 'POST' ? lenientHeaders(req.headers, parsed) : undefined);
    if (req.method === 'POST' && !(await isLegacyRequest(request, parsed, { maxRequestBodySize: maxBody }))) {
      requestConnections.set(request, connectionFor(token, endpointProfile, req));
      const uris = listenedUris(parsed);
      if (uris.length > 0) {
        let held: () => void;
        try {
          held = await listenWatch.acquire(uris, feedClientKey(token?.client, req.socket.remoteAddress));
        } catch (err) {
          if (!(err instanceof FeedRefusal)) throw err;
          return sendJson(res, 200, feedRefusalMessage((parsed as { id?: unknown }).id, err));
        }
        res.once('close', held);
      }
      return sendWebResponse(res, await modern.fetch(request, { parsedBody: parsed }));
    }

    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const session = sessions.get(sid);
      // A session answers only on the endpoint and to the credential that opened it.
      if (!session || session.endpoint !== path || session.client !== token?.client) {
        return sendJson(res, 404, jsonRpcError(-32001, 'Session not found'));
      }
      // A GET stream may stay open for hours: it does not keep an otherwise idle session alive.
      if (req.method === 'GET') sessions.touch(session);
      else res.once('close', sessions.begin(session));
      return sendWebResponse(res, await session.transport.handleRequest(request, { parsedBody: parsed }));
    }

    if (req.method !== 'POST') {
      // 2026-07-28 has no GET stream and no sessions to delete.
      return namesModernVersion(req.headers['mcp-protocol-version'])
        ? sendJson(res, 405, jsonRpcError(-32000, 'Method not allowed: 2026-07-28 has no GET stream or sessions; POST each request'), { Allow: 'POST' })
        : sendJson(res, 400, jsonRpcError(-32000, 'Bad Request: no valid Mcp-Session-Id; start with an initialize request'));
    }
    if (!isInitializeRequest(parsed)) {
      return sendJson(res, 400, jsonRpcError(-32000, 'Bad Request: no valid Mcp-Session-Id; start with an initialize request'));
    }
    // Sessions still opening count too: concurrent initializes must not overshoot the caps.
    if (sessions.size + opening.length >= maxSessions) {
      return sendJson(res, 503, jsonRpcError(-32000, 'Too many open sessions; retry later'), { 'Retry-After': '5' });
    }
    if (token && sessions.countFor(token.client) + opening.filter((c) => c === token.client).length >= maxPerClient) {
      return sendJson(
        res,
        429,
        jsonRpcError(-32000, `Client ${token.client} already holds ${maxPerClient} open sessions: close one (DELETE) or let idle ones expire, or send 2026-07-28 requests, which hold none`),
      );
    }
    opening.push(token?.client);
    try {
      await openSession(res, request, parsed, path, connectionFor(token, endpointProfile, req));
    } finally {
      opening.splice(opening.indexOf(token?.client), 1);
    }
  };

  /** 2025-11-25: `initialize` opens a session with a server of its own. */
  const openSession = async (res: ServerResponse, request: Request, initialize: unknown, path: string, conn: Connection) => {
    const server = createServer(app, conn, 'legacy');
    let session: Session | undefined;
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session = { id, server, transport, client: conn.client, endpoint: path, open: 0, lastSeen: Date.now() };
        sessions.add(session);
        res.once('close', sessions.begin(session));
        conn.log?.debug('session opened', { session: id, endpoint: path });
      },
      onsessionclosed: (id) => void sessions.close(id, 'deleted'),
    });
    transport.onclose = () => {
      if (transport.sessionId) void sessions.close(transport.sessionId, 'transport closed');
    };
    await server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody: initialize });
    if (!session) await server.close(); // initialize was refused; nothing to keep
    await sendWebResponse(res, response);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, route: { name: Route }) => {
    const url = new URL(req.url ?? '/', 'http://placeholder');
    const path = url.pathname;
    if (!hostPolicy.hostAllowed(req.headers.host)) {
      return sendJson(res, 403, { error: { code: 'FORBIDDEN_HOST', message: hostRefusal(req.headers.host) } });
    }
    if (closing) {
      return sendJson(res, 503, { error: { code: 'SHUTTING_DOWN', message: 'The server is shutting down' } }, {
        Connection: 'close',
        'Retry-After': '1',
      });
    }
    const mcp = /^\/mcp(?:\/([^/]+))?\/?$/.exec(path);
    if (mcp) {
      route.name = 'mcp';
      const name = mcp[1];
      if (name !== undefined && !(PROFILES as readonly string[]).includes(name)) {
        return sendJson(res, 404, {
          error: { code: 'UNKNOWN_PROFILE', message: `Unknown profile "${name}": use /mcp or /mcp/<${PROFILES.join('|')}>` },
        });
      }
      return handleMcp(req, res, path.replace(/\/$/, ''), name as Profile | undefined);
    }
    const hook = WEBHOOK_ROUTE.exec(path);
    if (hook) {
      route.name = 'webhook';
      return serveWebhook(req, res, url, hook[1]!, { store: app.store, now: app.now, log, channels: app.config.channels });
    }
    if (FEED_PATHS.has(path) && req.method === 'OPTIONS') return cors.preflight(req, res);
    if (path === '/' || path === '/widget.js') {
      route.name = 'widget';
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return sendJson(res, 405, { error: { code: 'METHOD_NOT_ALLOWED', message: `${path} is read-only` } }, { Allow: 'GET, HEAD' });
      }
      return path === '/' ? widget.serveDemo(req, res, url) : widget.serveScript(req, res, cors.headers(req));
    }
    const read = ({ '/healthz': 'healthz', '/metrics': 'metrics', '/banners': 'banners', '/banners/stream': 'banners_stream' } as const)[path];
    if (!read) return sendJson(res, 404, { error: { code: 'NOT_FOUND', message: `No route ${path}` } });
    route.name = read;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendJson(res, 405, { error: { code: 'METHOD_NOT_ALLOWED', message: `${path} is read-only` } }, { Allow: 'GET, HEAD' });
    }
    const feedHeaders = FEED_PATHS.has(path) ? cors.headers(req) : {};
    const token = authenticate(req, res, false, read === 'banners_stream' ? url.searchParams.get('access_token') : undefined, feedHeaders);
    if (token === null) return;
    switch (read) {
      case 'healthz':
        return sendJson(res, 200, { ok: true }, { 'Cache-Control': 'no-store' });
      case 'metrics': {
        const text = await metrics.registry.metrics();
        res.writeHead(200, { 'Content-Type': metrics.registry.contentType, 'Cache-Control': 'no-store' });
        return void res.end(text);
      }
      case 'banners':
        return serveBannerFeed(req, res, url, { store: app.store, now: app.now, privateCache: app.config.http.readAuth, headers: feedHeaders });
      case 'banners_stream':
        return serveBannerStream(req, res, url, { hub, streams, limits, headers: feedHeaders, client: feedClientKey(token?.client ?? presentedClient(req), req.socket.remoteAddress) });
    }
  };

  const keepAliveMs = options.keepAliveTimeoutMs ?? 5_000;
  const http = createHttpServer(
    {
      headersTimeout: options.headersTimeoutMs ?? 10_000,
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      keepAliveTimeout: keepAliveMs + KEEP_ALIVE_GRACE_MS,
      // Node checks the two timeouts above only this often (default 30 s).
      connectionsCheckingInterval: 1_000,
    },
    (req, res) => {
      // Advertise less than we hold: a client reusing an idle socket near the advertised end
      // (its timers late under load) must not meet our close and lose its POST to ECONNRESET.
      // Node 24's keepAliveTimeoutBuffer does the same; on Node 20 a header set here replaces
      // the one Node would write from keepAliveTimeout.
      res.setHeader('Keep-Alive', `timeout=${Math.floor(keepAliveMs / 1000)}`);
      const route: { name: Route } = { name: 'other' };
      const post = req.method === 'POST';
      if (post) inflightPosts++;
      res.once('close', () => {
        metrics.httpRequests.inc({ route: route.name, method: methodLabel(req.method), status: String(res.statusCode) });
        if (post && --inflightPosts === 0) idle?.();
      });
      handle(req, res, route).catch((err: unknown) => {
        if (err instanceof StoreUnavailableError) {
          // The database is down or cut off (the banner feed reads it): transient, not a bug.
          log.warn('http request failed: store unavailable', { route: route.name, reason: err.reason });
          if (!res.headersSent) {
            const message = `This server's database is unavailable right now; try again in ${err.retryAfterS} s.`;
            sendJson(res, 503, { error: { code: 'STORE_UNAVAILABLE', message, retry_after_s: err.retryAfterS } }, { 'Retry-After': String(err.retryAfterS) });
          } else res.destroy();
          return;
        }
        log.error('http request failed', { route: route.name, error: err instanceof Error ? err.stack : String(err) });
        if (!res.headersSent) sendJson(res, 500, { error: { code: 'INTERNAL_ERROR', message: 'Internal error' } });
        else res.destroy();
      });
    },
  );
  http.on('clientError', (err, socket) => {
    // Header timeouts and malformed requests: answer if the socket still can, then drop it.
    const status = (err as NodeJS.ErrnoException).code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    if (socket.writable) socket.end(`HTTP/1.1 ${status} ${status === 408 ? 'Request Timeout' : 'Bad Request'}\r\nConnection: close\r\n\r\n`);
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? DEFAULT_HTTP_PORT, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  hostPolicy = createHostPolicy({ host, port }, options.allowedHosts);
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}`;
  log.info('serving http', {
    url: `${url}/mcp`,
    auth: auth.required ? `bearer (${plural(app.config.http.tokens.length, 'token')})` : 'none (loopback only)',
    readAuth: app.config.http.readAuth,
  });

  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      closing = true;
      // Streams never finish by themselves: end them first, so readers reconnect elsewhere now.
      streams.endAll();
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeIdleConnections();
      const deadline = Date.now() + shutdownMs;
      // In-flight POSTs carry the tool calls and their answers; let them finish, bounded.
      if (inflightPosts > 0) {
        log.info('draining', { inflight: inflightPosts, boundMs: shutdownMs });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, shutdownMs);
          idle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      // Calls whose HTTP request went away still run to their delivery record.
      await app.drain(Math.max(0, deadline - Date.now()));
      listenWatch.releaseAll();
      // The store closes after this: no poll may outlive it.
      hub.close();
      await modern.close();
      await sessions.closeAll('shutdown');
      http.closeAllConnections();
      await stopped;
      log.info('http stopped', { unfinished: inflightPosts });
    })());

  return { host, port, url, metrics, sessionCount: () => sessions.size, streamCount: () => streams.size, close };
}

/** How long an idle keep-alive socket is held past the time advertised in `Keep-Alive: timeout=`. */
const KEEP_ALIVE_GRACE_MS = 5_000;

function methodLabel(method: string | undefined): string {
  return method && ['GET', 'POST', 'DELETE', 'HEAD'].includes(method) ? method : 'other';
}
