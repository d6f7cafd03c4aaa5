/**
 * 2025-11-25 over HTTP: one MCP server per session (WebStandardStreamableHTTPServerTransport),
 * so each keeps its handshake's clientInfo, bound to the credential and path that opened it,
 * within caps on open sessions, in all and per token. The HTTP transport and the bundle
 * gateway both hold their sessions here; each says in its own words why it refuses.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isInitializeRequest, WebStandardStreamableHTTPServerTransport, type Server } from '@modelcontextprotocol/server';
import type { HttpToken } from '../../../config/config.js';
import type { Logger } from '../../../core/log.js';
import { sendJson } from '../banner-feed.js';
import { namesModernVersion } from '../protocol-headers.js';
import { jsonRpcError } from '../request-auth.js';
import { SessionRegistry, type Session } from '../sessions.js';
import { sendWebResponse } from '../web-bridge.js';

/** The answers to a request no session takes. */
export interface SessionRefusals {
  /** An Mcp-Session-Id of no open session (or of one opened on another path or by another credential). */
  unknownSession(res: ServerResponse): void;
  /** A GET or DELETE without a session; `modern`: its MCP-Protocol-Version names 2026-07-28. */
  noSession(res: ServerResponse, modern: boolean): void;
  /** A POST without a session that is not an initialize. */
  notInitialize(res: ServerResponse): void;
  /** Open sessions at the cap. */
  full(res: ServerResponse): void;
  /** The client's own sessions at its cap. */
  clientFull(res: ServerResponse, client: string, max: number): void;
}

/** notify-mcp's own answers: JSON-RPC errors. */
const JSON_RPC_REFUSALS: SessionRefusals = {
  unknownSession: (res) => sendJson(res, 404, jsonRpcError(-32001, 'Session not found')),
  // 2026-07-28 has no GET stream and no sessions to delete.
  noSession: (res, modern) =>
    modern
      ? sendJson(res, 405, jsonRpcError(-32000, 'Method not allowed: 2026-07-28 has no GET stream or sessions; POST each request'), {
          Allow: 'POST',
        })
      : sendJson(res, 400, jsonRpcError(-32000, 'Bad Request: no valid Mcp-Session-Id; start with an initialize request')),
  notInitialize: (res) =>
    sendJson(res, 400, jsonRpcError(-32000, 'Bad Request: no valid Mcp-Session-Id; start with an initialize request')),
  full: (res) => sendJson(res, 503, jsonRpcError(-32000, 'Too many open sessions; retry later'), { 'Retry-After': '5' }),
  clientFull: (res, client, max) =>
    sendJson(
      res,
      429,
      jsonRpcError(
        -32000,
        `Client ${client} already holds ${max} open sessions: close one (DELETE) or let idle ones expire, or send 2026-07-28 requests, which hold none`,
      ),
    ),
};

export interface LegacySessionsDeps {
  log: Logger;
  idleMs: number;
  maxSessions: number;
  /** Default: no cap per client. */
  maxSessionsPerClient?: number;
  onCountChange?(open: number): void;
  /** Default: JSON-RPC errors. */
  refusals?: SessionRefusals;
}

/** What a new session is: its own server, the client it answers to, and where it logs. */
export interface Opening {
  server: Server;
  client: string | undefined;
  log?: Logger | undefined;
}

export interface LegacySessions {
  /**
   * A request that is not 2026-07-28's: one of an open session, or an `initialize` that opens
   * one. `open`: the new session's server, made only when one opens.
   */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    request: Request,
    parsed: unknown,
    path: string,
    token: HttpToken | undefined,
    open: () => Opening,
  ): Promise<void>;
  readonly size: number;
  /** The open sessions' servers (to tell each that a list changed). */
  servers(): Iterable<Server>;
  closeAll(reason: string): Promise<void>;
}

export function legacySessions(deps: LegacySessionsDeps): LegacySessions {
  const maxSessions = deps.maxSessions;
  const maxPerClient = deps.maxSessionsPerClient ?? Infinity;
  const refuse = deps.refusals ?? JSON_RPC_REFUSALS;
  const sessions = new SessionRegistry({ idleMs: deps.idleMs, log: deps.log, onCountChange: deps.onCountChange ?? (() => {}) });
  /** The clients of sessions being opened (initialize answered, not yet registered). */
  const opening: (string | undefined)[] = [];

  /** 2025-11-25: `initialize` opens a session with a server of its own. */
  const openSession = async (
    res: ServerResponse,
    request: Request,
    initialize: unknown,
    path: string,
    { server, client, log }: Opening,
  ) => {
    let session: Session | undefined;
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session = { id, server, transport, client, endpoint: path, open: 0, lastSeen: Date.now() };
        sessions.add(session);
        res.once('close', sessions.begin(session));
        log?.debug('session opened', { session: id, endpoint: path });
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

  const serve: LegacySessions['serve'] = async (req, res, request, parsed, path, token, open) => {
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const session = sessions.get(sid);
      // A session answers only on the endpoint and to the credential that opened it.
      if (!session || session.endpoint !== path || session.client !== token?.client) return refuse.unknownSession(res);
      // A GET stream may stay open for hours: it does not keep an otherwise idle session alive.
      if (req.method === 'GET') sessions.touch(session);
      else res.once('close', sessions.begin(session));
      return sendWebResponse(res, await session.transport.handleRequest(request, { parsedBody: parsed }));
    }

    if (req.method !== 'POST') return refuse.noSession(res, namesModernVersion(req.headers['mcp-protocol-version']));
    if (!isInitializeRequest(parsed)) return refuse.notInitialize(res);
    // Sessions still opening count too: concurrent initializes must not overshoot the caps.
    if (sessions.size + opening.length >= maxSessions) return refuse.full(res);
    if (token && sessions.countFor(token.client) + opening.filter((c) => c === token.client).length >= maxPerClient) {
      return refuse.clientFull(res, token.client, maxPerClient);
    }
    opening.push(token?.client);
    try {
      await openSession(res, request, parsed, path, open());
    } finally {
      opening.splice(opening.indexOf(token?.client), 1);
    }
  };

  return {
    serve,
    get size() {
      return sessions.size;
    },
    *servers() {
      for (const session of sessions.all()) yield session.server;
    },
    closeAll: (reason) => sessions.closeAll(reason),
  };
}
