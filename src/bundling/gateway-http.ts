import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Logger } from '../log.js';
import { GatewayConfigError } from './errors.js';

const MAX_BODY = 1024 * 1024;
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
  /** Every live session's MCP server (to broadcast list_changed). */
  servers(): Server[];
  close(): Promise<void>;
}

/**
 * Streamable HTTP, stateful (one SDK Server per session, so list_changed reaches each
 * client). The gateway has no authentication of its own, so it binds loopback only and
 * checks Host against DNS rebinding.
 */
export async function serveHttp(
  options: { port: number; host: string },
  createMcpServer: () => Server,
  log: Logger,
): Promise<HttpGateway> {
  const host = loopbackHost(options.host);
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server }>();
  let port = options.port;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/mcp') return void res.writeHead(404).end('not found');
    const hostHeader = (req.headers.host ?? '').toLowerCase();
    const allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
    if (!allowedHosts.includes(hostHeader)) return void res.writeHead(403).end('forbidden host');
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY) return void res.writeHead(413).end('body too large');

    const sid = req.headers['mcp-session-id'];
    const existing = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (existing) return existing.transport.handleRequest(req, res);
    if (sid !== undefined) return void res.writeHead(404).end('unknown session');
    if (req.method !== 'POST') return void res.writeHead(405).end('method not allowed');

    const server = createMcpServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, server }),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
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
    servers: () => [...sessions.values()].map((s) => s.server),
    close: async () => {
      await Promise.all([...sessions.values()].map((s) => s.server.close().catch(() => {})));
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
