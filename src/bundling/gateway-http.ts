import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, isLegacyRequest, type Server } from '@modelcontextprotocol/server';
import type { Logger } from '../core/log.js';
import { BodyTooLargeError, readBody } from '../transports/body.js';
import { createHostPolicy, type HostPolicy } from '../transports/http/host-check.js';
import { parseMessage, screenMessage } from '../transports/inbound.js';
import { legacySessions, type SessionRefusals } from '../transports/http/routes/mcp-sessions.js';
import { sendWebResponse, toWebRequest } from '../transports/http/web-bridge.js';
import { GatewayConfigError } from './errors.js';

const MAX_BODY = 1024 * 1024;
/** The caps of notify-mcp's own --http: open 2025-era sessions, and their idle time. */
export const MAX_GATEWAY_SESSIONS = 1_000;
export const GATEWAY_SESSION_IDLE_MS = 30 * 60_000;
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** The host to bind, or GatewayConfigError when it is not loopback. Accepts "[::1]". */
export function loopbackHost(requested: string): string {
  const host = requested.replace(/^\[(.*)\]$/, '$1');
  if (!LOOPBACK.has(host)) {
    throw new GatewayConfigError(
      `the bundle gateway has no authentication and serves loopback only; use --host 127.0.0.1 (got ${requested})`,
    );
  }
  return host;
}

export interface HttpGateway {
  host: string;
  port: number;
  /** The MCP endpoint. */
  url: string;
  /** Tells every client that the tool list changed: 2025-era sessions and 2026-07-28 listen streams. */
  toolsChanged(): void;
  close(): Promise<void>;
}

type Era = 'legacy' | 'modern';

const text = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) =>
  void res.writeHead(status, { 'Content-Type': 'text/plain', ...headers }).end(body);

/** The gateway's words for a request no session takes: plain text. */
const GATEWAY_REFUSALS: SessionRefusals = {
  unknownSession: (res) => text(res, 404, 'unknown session'),
  noSession: (res, modern) =>
    text(res, modern ? 405 : 400, 'POST an initialize request (2025-11-25) or a 2026-07-28 request', { Allow: 'POST' }),
  notInitialize: (res) => text(res, 400, 'no session: start with an initialize request'),
  full: (res) =>
    text(res, 503, 'too many open sessions; retry later, or send 2026-07-28 requests, which hold none', { 'Retry-After': '5' }),
  // The gateway has no tokens, so no client has a share of its own.
  clientFull: (res) =>
    text(res, 503, 'too many open sessions; retry later, or send 2026-07-28 requests, which hold none', { 'Retry-After': '5' }),
};

/**
 * Streamable HTTP at `/mcp`, both eras: 2026-07-28 per request (createMcpHandler, which also
 * serves `subscriptions/listen` for list changes), 2025-era clients in sessions (one SDK
 * Server each, so list_changed reaches each of them). The gateway has no authentication of
 * its own, so it binds loopback only and checks Host against DNS rebinding.
 */
export interface GatewayHttpOptions {
  port: number;
  host: string;
  /** Open 2025-era sessions at most; an initialize over it gets 503. Default 1,000. */
  maxSessions?: number;
  /** A session without an MCP request for this long is closed. Default 30 minutes. */
  sessionIdleMs?: number;
}

export async function serveHttp(options: GatewayHttpOptions, createMcpServer: (era: Era) => Server, log: Logger): Promise<HttpGateway> {
  const host = loopbackHost(options.host);
  const maxSessions = options.maxSessions ?? MAX_GATEWAY_SESSIONS;
  // The transport's sessions: idle ones are swept, closing one closes its Server once.
  const sessions = legacySessions({
    idleMs: options.sessionIdleMs ?? GATEWAY_SESSION_IDLE_MS,
    log,
    maxSessions,
    refusals: GATEWAY_REFUSALS,
  });
  let policy: HostPolicy | undefined;
  const modern = createMcpHandler(({ era }) => createMcpServer(era), {
    legacy: 'reject',
    maxRequestBodySize: MAX_BODY,
    onerror: (error) => log.debug('bundle mcp request refused', { error: error.message }),
  });
  let port = options.port;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://placeholder');
    if (url.pathname !== '/mcp') return text(res, 404, 'not found');
    // DNS rebinding and pages of other origins: the server's own checks, for our address.
    policy ??= createHostPolicy({ host, port });
    if (!policy.hostAllowed(req.headers.host)) return text(res, 403, 'forbidden host');
    if (!policy.originAllowed(req.headers.origin)) return text(res, 403, 'forbidden origin');

    let parsed: unknown;
    if (req.method === 'POST') {
      const read = await readMessage(req, res);
      if (!read) return;
      parsed = read.message;
    }
    const request = toWebRequest(req, res);
    if (req.method === 'POST' && !(await isLegacyRequest(request, parsed, { maxRequestBodySize: MAX_BODY }))) {
      return sendWebResponse(res, await modern.fetch(request, { parsedBody: parsed }));
    }

    return sessions.serve(req, res, request, parsed, '/mcp', undefined, () => ({ server: createMcpServer('legacy'), client: undefined }));
  };

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error('bundle http request failed', { error: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent) res.writeHead(500).end('internal error');
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, host, () => resolve());
  });
  port = (http.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port,
    url: `http://${urlHost}:${port}/mcp`,
    toolsChanged: () => {
      modern.notify.toolsChanged();
      for (const server of sessions.servers()) {
        server.sendToolListChanged().catch((err: unknown) => {
          log.warn('bundle list_changed not delivered', { error: err instanceof Error ? err.message : String(err) });
        });
      }
    },
    close: async () => {
      await modern.close();
      await sessions.closeAll('shutdown');
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A POST's JSON-RPC message, read and screened; undefined when it was refused (and answered). */
async function readMessage(req: IncomingMessage, res: ServerResponse): Promise<{ message: unknown } | undefined> {
  let parsed: unknown;
  try {
    const read = parseMessage(await readBody(req, MAX_BODY));
    if (read.refusal) return void text(res, 400, read.refusal.error.message);
    parsed = read.value;
  } catch (err) {
    if (err instanceof BodyTooLargeError) return void text(res, 413, 'body too large', { Connection: 'close' });
    throw err;
  }
  const screened = screenMessage(parsed);
  if (screened.refusal) {
    res.writeHead(400, { 'Content-Type': 'application/json' });
    return void res.end(JSON.stringify({ jsonrpc: '2.0', id: screened.refusal.id, error: screened.refusal.error }));
  }
  return { message: screened.message };
}
