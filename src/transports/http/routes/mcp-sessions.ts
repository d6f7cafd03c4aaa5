/**
 * 2025-11-25 over HTTP: one MCP server per session (WebStandardStreamableHTTPServerTransport),
 * so each keeps its handshake's clientInfo, bound to the credential and path that opened it,
 * within caps on open sessions, in all and per token.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isInitializeRequest, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { HttpToken } from '../../../config/config.js';
import type { Logger } from '../../../core/log.js';
import { createServer, type App, type Connection } from '../../../mcp/server.js';
import { sendJson } from '../banner-feed.js';
import { namesModernVersion } from '../protocol-headers.js';
import { jsonRpcError } from '../request-auth.js';
import { SessionRegistry, type Session } from '../sessions.js';
import { sendWebResponse } from '../web-bridge.js';

export interface LegacySessionsDeps {
  app: App;
  log: Logger;
  idleMs: number;
  maxSessions: number;
  maxSessionsPerClient: number;
  onCountChange(open: number): void;
}

export interface LegacySessions {
  /**
   * A request that is not 2026-07-28's: one of an open session, or an `initialize` that opens
   * one. `conn`: the new session's connection, made only when one opens.
   */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    request: Request,
    parsed: unknown,
    path: string,
    token: HttpToken | undefined,
    conn: () => Connection,
  ): Promise<void>;
  readonly size: number;
  closeAll(reason: string): Promise<void>;
}

export function legacySessions(deps: LegacySessionsDeps): LegacySessions {
  const { app } = deps;
  const maxSessions = deps.maxSessions;
  const maxPerClient = deps.maxSessionsPerClient;
  const sessions = new SessionRegistry({ idleMs: deps.idleMs, log: deps.log, onCountChange: deps.onCountChange });
  /** The clients of sessions being opened (initialize answered, not yet registered). */
  const opening: (string | undefined)[] = [];

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

  const serve: LegacySessions['serve'] = async (req, res, request, parsed, path, token, conn) => {
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
      await openSession(res, request, parsed, path, conn());
    } finally {
      opening.splice(opening.indexOf(token?.client), 1);
    }
  };

  return {
    serve,
    get size() {
      return sessions.size;
    },
    closeAll: (reason) => sessions.closeAll(reason),
  };
}
