/**
 * The open 2025-era MCP sessions of the HTTP server (2026-07-28 has none): one SDK Server
 * and transport each, bound to the credential and endpoint that opened them, closed on
 * DELETE, at shutdown, and after `idleMs` without an MCP request (an open GET stream does
 * not count: a client that comes back gets 404 and initializes again, as the spec says).
 */
import type { Server, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { Logger } from '../../core/log.js';

export interface Session {
  id: string;
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  /** Authenticated client (token), if any; a session answers only to the same credential. */
  client: string | undefined;
  /** The path that opened it (`/mcp` or `/mcp/<profile>`). */
  endpoint: string;
  /** POST and DELETE requests of this session still being answered. */
  open: number;
  lastSeen: number;
}

export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: { idleMs: number; log: Logger; onCountChange: (count: number) => void }) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1_000, Math.min(options.idleMs / 4, 60_000)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Open sessions of one authenticated client. */
  countFor(client: string): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.client === client) n++;
    return n;
  }

  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  /** The open sessions, for a broadcast. */
  all(): IterableIterator<Session> {
    return this.sessions.values();
  }

  add(session: Session): void {
    this.sessions.set(session.id, session);
    this.options.onCountChange(this.sessions.size);
  }

  touch(session: Session): void {
    session.lastSeen = Date.now();
  }

  /** Marks a request of the session as started; returns the matching "finished". */
  begin(session: Session): () => void {
    session.open++;
    session.lastSeen = Date.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      session.open--;
      session.lastSeen = Date.now();
    };
  }

  /** Forgets the session (DELETE, transport closed, idle) and closes its server once. */
  async close(id: string, reason: string): Promise<void> {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    this.options.onCountChange(this.sessions.size);
    this.options.log.debug('session closed', { session: id, reason, ...(session.client ? { client: session.client } : {}) });
    await session.server.close().catch((err: unknown) => {
      this.options.log.warn('session close failed', { session: id, error: err instanceof Error ? err.message : String(err) });
    });
  }

  async closeAll(reason: string): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.keys()].map((id) => this.close(id, reason)));
  }

  private sweep(now = Date.now()): void {
    for (const s of this.sessions.values()) {
      if (s.open === 0 && now - s.lastSeen > this.options.idleMs) void this.close(s.id, 'idle');
    }
  }
}
