/**
 * POST|GET|DELETE /mcp and /mcp/<profile>, both protocol eras on one endpoint: what stands in
 * front (Origin, bearer token, the body bound, the inbound screen) applies to both, then the
 * SDK's classifier (isLegacyRequest) sends 2026-07-28 traffic to createMcpHandler, stateless,
 * and 2025-11-25 traffic to its sessions (mcp-sessions.ts), each bound to credential and path.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import { FeedRefusal } from '../../../banners/feed-errors.js';
import { feedClientKey } from '../../../banners/feed-client.js';
import type { BannerHub } from '../../../banners/hub.js';
import { PROFILES, type HttpToken, type Profile } from '../../../config/config.js';
import type { Logger } from '../../../core/log.js';
import type { Metrics } from '../../../mcp/metrics.js';
import { feedRefusalMessage, listenedUris, ResourceWatch, withheldListenMessage } from '../../../mcp/resources.js';
import { bannerResourcesOffered, offeredGroups } from '../../../mcp/tool-groups.js';
import { createServer, type App, type Connection } from '../../../mcp/server.js';
import { BodyTooLargeError, readBody } from '../../body.js';
import { parseMessage, screenMessage } from '../../inbound.js';
import { sendJson } from '../banner-feed.js';
import type { OpenStreams } from '../banner-stream.js';
import { originRefusal } from '../host-check.js';
import { lenientHeaders } from '../protocol-headers.js';
import { jsonRpcError, type RequestAuth } from '../request-auth.js';
import { sendWebResponse, toWebRequest } from '../web-bridge.js';
import { legacySessions, type Opening } from './mcp-sessions.js';
import type { Route, Routed } from './route.js';

export interface McpRouteDeps {
  app: App;
  log: Logger;
  auth: RequestAuth;
  metrics: Metrics;
  hub: BannerHub;
  /** The feed's open streams: a listen naming banners:// URIs holds one while it is open. */
  streams: OpenStreams;
  /** The Origin check; the listener's, which learns its port once it listens. */
  originAllowed(origin: string | undefined): boolean;
  maxBodyBytes: number;
  /** What grew the cap, said in a 413. */
  maxBodyWhy?: string | undefined;
  maxSessions: number;
  maxSessionsPerClient: number;
  sessionIdleMs: number;
}

export interface McpRoute {
  route: Route;
  /** Open 2025-era sessions (2026-07-28 traffic has none). */
  sessionCount(): number;
  /** Ends the resource watches of open subscriptions/listen responses. */
  releaseWatches(): void;
  /** Closes the 2026-07-28 handler and every session. */
  close(): Promise<void>;
}

export function mcpRoute(deps: McpRouteDeps): McpRoute {
  const { app, log, auth, metrics, hub } = deps;
  const maxBody = deps.maxBodyBytes;
  const knownTools = new Set(Object.values(app.catalog).flatMap((c) => c.tools.map((t) => t.name)));
  const legacy = legacySessions({
    log,
    idleMs: deps.sessionIdleMs,
    maxSessions: deps.maxSessions,
    maxSessionsPerClient: deps.maxSessionsPerClient,
    onCountChange: (n) => metrics.activeSessions.set(n),
  });

  const connectionFor = (token: HttpToken | undefined, endpointProfile: Profile | undefined, req: IncomingMessage) =>
    connectionOf(log, metrics.observeCall(knownTools), token, endpointProfile, req);

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
    if (!deps.originAllowed(req.headers.origin)) {
      return sendJson(res, 403, jsonRpcError(-32000, `Forbidden: ${originRefusal(req.headers.origin)}`));
    }
    const token = auth.authenticate(req, res, true);
    if (token === null) return;

    let parsed: unknown;
    if (req.method === 'POST') {
      const read = await readMessage(req, res, deps, log);
      if (!read) return;
      parsed = read.message;
    } else if (req.method !== 'GET' && req.method !== 'DELETE') {
      return sendJson(res, 405, jsonRpcError(-32000, 'Method not allowed'), { Allow: 'GET, POST, DELETE' });
    }

    const request = toWebRequest(req, res, req.method === 'POST' ? lenientHeaders(req.headers, parsed) : undefined);
    if (req.method === 'POST' && !(await isLegacyRequest(request, parsed, { maxRequestBodySize: maxBody }))) {
      requestConnections.set(request, connectionFor(token, endpointProfile, req));
      const uris = listenedUris(parsed);
      if (uris.length > 0 && !bannerResourcesOffered(offeredGroups(app.config, token?.client))) {
        return sendJson(res, 200, withheldListenMessage((parsed as { id?: unknown }).id));
      }
      if (uris.length > 0 && !(await holdListen(req, res, parsed, uris, token, deps.streams, listenWatch))) return;
      return sendWebResponse(res, await modern.fetch(request, { parsedBody: parsed }));
    }

    // 2025-11-25: a request of an open session, or an initialize that opens one.
    return legacy.serve(req, res, request, parsed, path, token, () => legacyOpening(app, connectionFor(token, endpointProfile, req)));
  };

  const route: Route = (req, res, url) => mcpRequest(req, res, url, handleMcp);

  return {
    route,
    sessionCount: () => legacy.size,
    releaseWatches: () => listenWatch.releaseAll(),
    async close() {
      await modern.close();
      await legacy.closeAll('shutdown');
    },
  };
}

/** /mcp, or /mcp/<profile> with a profile of ours (else a 404); undefined for another path. */
function mcpRequest(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  handleMcp: (req: IncomingMessage, res: ServerResponse, path: string, endpointProfile: Profile | undefined) => Promise<void>,
): Routed | undefined {
  const path = url.pathname;
  const mcp = /^\/mcp(?:\/([^/]+))?\/?$/.exec(path);
  if (!mcp) return undefined;
  return {
    name: 'mcp',
    serve() {
      const name = mcp[1];
      if (name !== undefined && !(PROFILES as readonly string[]).includes(name)) {
        return sendJson(res, 404, {
          error: { code: 'UNKNOWN_PROFILE', message: `Unknown profile "${name}": use /mcp or /mcp/<${PROFILES.join('|')}>` },
        });
      }
      return handleMcp(req, res, path.replace(/\/$/, ''), name as Profile | undefined);
    },
  };
}

/** A 2025-era session's own server, for the connection that opens it. */
function legacyOpening(app: App, conn: Connection): Opening {
  return { server: createServer(app, conn, 'legacy'), client: conn.client, log: conn.log };
}

/** What a server instance needs to know about the request it answers. */
function connectionOf(
  log: Logger,
  observeCall: Connection['observeCall'],
  token: HttpToken | undefined,
  endpointProfile: Profile | undefined,
  req: IncomingMessage,
): Connection {
  return {
    credentialProfile: token?.profile,
    endpointProfile,
    client: token?.client,
    feedClient: feedClientKey(token?.client, req.socket.remoteAddress),
    log: token ? log.child({ client: token.client }) : log,
    observeCall,
  };
}

/** A POST's message, read within the body bound and screened; undefined when refused (answered). */
async function readMessage(
  req: IncomingMessage,
  res: ServerResponse,
  deps: Pick<McpRouteDeps, 'maxBodyBytes' | 'maxBodyWhy'>,
  log: Logger,
): Promise<{ message: unknown } | undefined> {
  const maxBody = deps.maxBodyBytes;
  let parsed: unknown;
  try {
    const read = parseMessage(await readBody(req, maxBody));
    if (read.refusal) return void sendJson(res, 400, { jsonrpc: '2.0', id: null, error: read.refusal.error });
    parsed = read.value;
  } catch (err) {
    if (err instanceof BodyTooLargeError) {
      return void sendJson(
        res,
        413,
        jsonRpcError(-32000, `Request body over ${maxBody} bytes${deps.maxBodyWhy ? ` (${deps.maxBodyWhy})` : ''}`),
        { Connection: 'close' },
      );
    }
    throw err;
  }
  const screened = screenMessage(parsed);
  if (screened.refusal) {
    log.debug('mcp message refused', { reason: screened.refusal.reason });
    return void sendJson(res, 400, { jsonrpc: '2.0', id: screened.refusal.id, error: screened.refusal.error });
  }
  return { message: screened.message };
}

/**
 * A subscriptions/listen naming banners:// URIs holds one of the feed's open streams and
 * watches them while its response is open; false when the feed refused it (answered).
 */
async function holdListen(
  req: IncomingMessage,
  res: ServerResponse,
  parsed: unknown,
  uris: string[],
  token: HttpToken | undefined,
  streams: OpenStreams,
  listenWatch: ResourceWatch,
): Promise<boolean> {
  const client = feedClientKey(token?.client, req.socket.remoteAddress);
  let held: () => void;
  let stream: (() => void) | undefined;
  try {
    stream = streams.hold(res, client, false);
    held = await listenWatch.acquire(uris, client);
  } catch (err) {
    stream?.();
    if (!(err instanceof FeedRefusal)) throw err;
    sendJson(res, 200, feedRefusalMessage((parsed as { id?: unknown }).id, err));
    return false;
  }
  res.once('close', held);
  return true;
}
