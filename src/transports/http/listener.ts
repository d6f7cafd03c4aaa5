/**
 * Streamable HTTP on node:http: a listener and a route table (routes/: mcp, webhooks, feed,
 * widget, ops, console). The listener owns what applies to every path (the Host check, shutdown drain,
 * timeouts, the request metric, answering what a route throws); each route module answers its
 * paths under its own auth rule (the endpoints and their rules: docs/http.md).
 *
 * In the order of hono's hono-base.ts: `wire` builds the route table, `dispatch` finds the
 * route for a request (or the 404), `onError` is the one place that turns what a route throws
 * into a response, and `shutdown` drains.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bannerHubFor, type BannerHub, type HubOptions } from '../../banners/hub.js';
import { loadWidgetAssets } from '../../banners/widget/assets.js';
import { ConfigError, type Config } from '../../config/config.js';
import type { Logger } from '../../core/log.js';
import { plural } from '../../core/words.js';
import { createMetrics, type Metrics } from '../../mcp/metrics.js';
import type { App } from '../../mcp/server.js';
import { errors } from '../../core/errors.js';
import { StoreUnavailableError } from '../../store/errors.js';
import { sendJson } from './banner-feed.js';
import { DEFAULT_STREAM_LIMITS, OpenStreams, type StreamLimits } from './banner-stream.js';
import { createFeedCors } from './cors.js';
import { DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT } from './defaults.js';
import { createHostPolicy, hostRefusal, isLoopbackHost, type HostPolicy } from './host-check.js';
import { createRequestAuth } from './request-auth.js';
import { consoleActions } from '../../console/actions.js';
import { createSessions } from '../../console/session.js';
import { answerRoute } from './routes/answer.js';
import { consoleRoute } from './routes/console.js';
import { feedRoute, preflightRoute } from './routes/feed.js';
import { mcpRoute, type McpRoute } from './routes/mcp.js';
import { opsRoute } from './routes/ops.js';
import type { Route, RouteName } from './routes/route.js';
import { webhookRoute } from './routes/webhooks.js';
import { widgetRoute } from './routes/widget.js';

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
  /** The banner stream's timings and bounds (tests shorten them); maxStreams and streamsPerClient default to NOTIFY_FEED_MAX_STREAMS and NOTIFY_FEED_CLIENT_STREAMS. */
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

export async function serveHttp(app: App, options: HttpOptions = {}, log: Logger = app.log): Promise<HttpHandle> {
  const host = options.host ?? DEFAULT_HTTP_HOST;
  assertBindable(app.config, host);
  const wired = wire(app, options, log, host);
  const traffic: Traffic = { closing: false, inflightPosts: 0 };
  const http = createListener(options, wired, traffic, log);
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? DEFAULT_HTTP_PORT, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  wired.hosts.policy = createHostPolicy({ host, port }, options.allowedHosts);
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}`;
  log.info('serving http', {
    url: `${url}/mcp`,
    auth: wired.authRequired ? `bearer (${plural(app.config.http.tokens.length, 'token')})` : 'none (loopback only)',
    readAuth: app.config.http.readAuth,
  });
  const close = shutdown(app, wired, traffic, http, options.shutdownMs ?? app.config.sendBudgetMs + 2_000, log);
  return { host, port, url, metrics: wired.metrics, sessionCount: wired.mcp.sessionCount, streamCount: () => wired.streams.size, close };
}

/** What the listener holds once wired: the route table and what outlives a request. */
interface Wired {
  routes: Route[];
  mcp: McpRoute;
  hub: BannerHub;
  streams: OpenStreams;
  metrics: Metrics;
  authRequired: boolean;
  /** Replaced once the port is known (a port of 0 picks one). */
  hosts: { policy: HostPolicy };
}

/** The listener's own traffic state, for the shutdown drain. */
interface Traffic {
  closing: boolean;
  inflightPosts: number;
  idle?: () => void;
}

/** Wiring: the shared parts, and the route table built on them. */
function wire(app: App, options: HttpOptions, log: Logger, host: string): Wired {
  const auth = createRequestAuth({
    tokens: app.config.http.tokens,
    feedTokens: app.config.feed.tokens,
    readAuth: app.config.http.readAuth,
  });
  const cors = createFeedCors(app.config.feed.origins);
  const { pollMs, ...streamLimits } = options.stream ?? {};
  const { maxStreams, streamsPerClient } = app.config.feed;
  const limits: StreamLimits = { ...DEFAULT_STREAM_LIMITS, maxStreams, streamsPerClient, ...streamLimits };
  const streams = new OpenStreams(limits);
  const hub = bannerHubFor(app.store, { pollMs, log });
  const metrics = createMetrics({ channels: app.channels.map((c) => c.name) });
  const widget = loadWidgetAssets();
  const hosts = { policy: createHostPolicy({ host, port: options.port ?? DEFAULT_HTTP_PORT }, options.allowedHosts) };
  const mcp = mcpRoute({
    app,
    log,
    auth,
    metrics,
    hub,
    streams,
    originAllowed: (origin) => hosts.policy.originAllowed(origin),
    maxBodyBytes: options.maxBodyBytes ?? app.config.messageCap.bytes,
    maxBodyWhy: options.maxBodyBytes === undefined ? app.config.messageCap.why : undefined,
    maxSessions: options.maxSessions ?? 1_000,
    maxSessionsPerClient: options.maxSessionsPerClient ?? 100,
    sessionIdleMs: options.sessionIdleMs ?? 30 * 60_000,
  });
  if (app.config.http.readAuth && !auth.required && app.config.feed.tokens.length === 0) {
    log.warn('NOTIFY_READ_AUTH=1 but NOTIFY_HTTP_TOKENS and NOTIFY_FEED_TOKENS are empty: read endpoints refuse every request');
  }
  /** Tried in order; the first that takes the request answers it. */
  const routes: Route[] = [
    mcp.route,
    webhookRoute({ store: app.store, now: app.now, log, channels: app.config.channels }),
    preflightRoute(cors),
    widgetRoute({ widget, cors }),
    opsRoute({ auth, metrics }),
    consoleRoute({
      actions: consoleActions(app),
      sessions: createSessions(
        app.config.http.tokens.filter((t) => app.config.http.operators.includes(t.client)),
        app.store,
      ),
      tokens: app.config.http.tokens,
      operators: app.config.http.operators,
      now: app.now,
      log,
    }),
    feedRoute({ auth, cors, store: app.store, now: app.now, privateCache: app.config.http.readAuth, hub, streams, limits }),
    answerRoute({ store: app.store, now: app.now, publicUrl: app.config.publicUrl }),
  ];
  return { routes, mcp, hub, streams, metrics, authRequired: auth.required, hosts };
}

/** The node:http server: timeouts, the keep-alive header, the request metric and the drain count around dispatch. */
function createListener(options: HttpOptions, wired: Wired, traffic: Traffic, log: Logger): HttpServer {
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
      const route: { name: RouteName } = { name: 'other' };
      const post = req.method === 'POST';
      if (post) traffic.inflightPosts++;
      res.once('close', () => {
        wired.metrics.httpRequests.inc({ route: route.name, method: methodLabel(req.method), status: String(res.statusCode) });
        if (post && --traffic.inflightPosts === 0) traffic.idle?.();
      });
      dispatch(req, res, route, wired, traffic).catch((err: unknown) => onError(err, res, route.name, log));
    },
  );
  http.on('clientError', (err, socket) => {
    // Header timeouts and malformed requests: answer if the socket still can, then drop it.
    const status = (err as NodeJS.ErrnoException).code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    if (socket.writable)
      socket.end(`HTTP/1.1 ${status} ${status === 408 ? 'Request Timeout' : 'Bad Request'}\r\nConnection: close\r\n\r\n`);
    else socket.destroy();
  });
  return http;
}

/** Dispatch: what applies to every path (the Host check, shutdown), then the first route that takes the request; none is a 404. */
async function dispatch(
  req: IncomingMessage,
  res: ServerResponse,
  route: { name: RouteName },
  wired: Wired,
  traffic: Traffic,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://placeholder');
  if (!wired.hosts.policy.hostAllowed(req.headers.host)) {
    return sendJson(res, 403, { error: { code: 'FORBIDDEN_HOST', message: hostRefusal(req.headers.host) } });
  }
  if (traffic.closing) {
    return sendJson(
      res,
      503,
      { error: { code: 'SHUTTING_DOWN', message: 'The server is shutting down' } },
      {
        Connection: 'close',
        'Retry-After': '1',
      },
    );
  }
  for (const match of wired.routes) {
    const routed = match(req, res, url);
    if (routed) {
      route.name = routed.name;
      return routed.serve();
    }
  }
  return sendJson(res, 404, { error: { code: 'NOT_FOUND', message: `No route ${url.pathname}` } });
}

/**
 * The one error handler: what a route throws becomes a response here (a 503 with
 * Retry-After when the store is unavailable, else a 500), or a dropped connection when the
 * response had begun.
 */
function onError(err: unknown, res: ServerResponse, route: RouteName, log: Logger): void {
  if (err instanceof StoreUnavailableError) {
    // The database is down or cut off (the banner feed reads it): transient, not a bug.
    log.warn('http request failed: store unavailable', { route, reason: err.reason });
    if (!res.headersSent)
      sendJson(
        res,
        503,
        { error: errors.storeUnavailable(err.retryAfterS, undefined, err).toBody() },
        { 'Retry-After': String(err.retryAfterS) },
      );
    else res.destroy();
    return;
  }
  log.error('http request failed', { route, error: err instanceof Error ? err.stack : String(err) });
  if (!res.headersSent) sendJson(res, 500, { error: { code: 'INTERNAL_ERROR', message: 'Internal error' } });
  else res.destroy();
}

/** Shutdown: end the streams, refuse new requests, drain in-flight POSTs and sends (bounded), then close what the routes hold. */
function shutdown(app: App, wired: Wired, traffic: Traffic, http: HttpServer, shutdownMs: number, log: Logger): () => Promise<void> {
  let closed: Promise<void> | undefined;
  return () =>
    (closed ??= (async () => {
      traffic.closing = true;
      // Streams never finish by themselves: end them first, so readers reconnect elsewhere now.
      wired.streams.endAll();
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeIdleConnections();
      const deadline = Date.now() + shutdownMs;
      // In-flight POSTs carry the tool calls and their answers; let them finish, bounded.
      if (traffic.inflightPosts > 0) {
        log.info('draining', { inflight: traffic.inflightPosts, boundMs: shutdownMs });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, shutdownMs);
          traffic.idle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      // Calls whose HTTP request went away still run to their delivery record.
      await app.drain(Math.max(0, deadline - Date.now()));
      wired.mcp.releaseWatches();
      // The store closes after this: no poll may outlive it.
      wired.hub.close();
      await wired.mcp.close();
      http.closeAllConnections();
      await stopped;
      log.info('http stopped', { unfinished: traffic.inflightPosts });
    })());
}

/** How long an idle keep-alive socket is held past the time advertised in `Keep-Alive: timeout=`. */
const KEEP_ALIVE_GRACE_MS = 5_000;

function methodLabel(method: string | undefined): string {
  return method && ['GET', 'POST', 'DELETE', 'HEAD'].includes(method) ? method : 'other';
}
