/**
 * Console sessions: the cookie names the operator client, when it ends and a random session
 * id, signed with HMAC-SHA256 under a key derived from that operator's own token. Every
 * replica with the same NOTIFY_HTTP_TOKENS verifies it, and removing or rotating the token
 * ends every session it opened. Signing out records the session id as revoked in the store
 * the replicas share, and every request asks it, so a copied cookie ends with the sign-out
 * everywhere. A form's CSRF token is derived from the session, so a page from another origin
 * (which cannot read the cookie) cannot forge one. A notice a page shows after a redirect
 * (`?done=`) is signed the same way, so only the server's own words read as its notice.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SessionsPort } from '../store/ports/sessions.js';

export interface OperatorToken {
  client: string;
  token: string;
}

/** A console session lasts this long after login. */
export const SESSION_MS = 8 * 3_600_000;

/** What sessions need of the store: the revoked session ids, shared by every replica. */
export type SessionRevocations = SessionsPort;

export interface Session {
  client: string;
  expiresAt: number;
  /** Random per sign-in: what a sign-out revokes. */
  id: string;
  /** The cookie value, which the CSRF token is bound to. */
  value: string;
}

const keyOf = (op: OperatorToken) => createHash('sha256').update(`notify-mcp console session\0${op.token}`).digest();
const mac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest('base64url');

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function createSessions(operators: readonly OperatorToken[], revocations: SessionRevocations) {
  const byClient = new Map(operators.map((op) => [op.client, op]));
  const noticeMac = (client: string, kind: string, text: string): string | undefined => {
    const op = byClient.get(client);
    return op ? mac(keyOf(op), `notice\0${kind}\0${text}`) : undefined;
  };
  return {
    /** A session cookie value for `client`, from `now`. */
    open(client: string, now: number): Session {
      const op = byClient.get(client);
      if (!op) throw new Error(`${client} is not an operator`);
      const expiresAt = now + SESSION_MS;
      const id = randomBytes(16).toString('base64url');
      const body = `${Buffer.from(client).toString('base64url')}.${expiresAt}.${id}`;
      return { client, expiresAt, id, value: `${body}.${mac(keyOf(op), body)}` };
    },
    /** The session a cookie value holds, if it is one of ours, its client still an operator, and not expired (revocation aside: `check`). */
    verify(value: string | undefined, now: number): Session | undefined {
      const m = /^([A-Za-z0-9_-]{1,200})\.(\d{1,16})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
      if (!m) return undefined;
      const client = Buffer.from(m[1]!, 'base64url').toString('utf8');
      const op = byClient.get(client);
      const expiresAt = Number(m[2]);
      if (!op || !safeEqual(mac(keyOf(op), `${m[1]}.${m[2]}.${m[3]}`), m[4]!) || expiresAt <= now) return undefined;
      return { client, expiresAt, id: m[3]!, value: value! };
    },
    /** `verify`, and not signed out on any replica. */
    async check(value: string | undefined, now: number): Promise<Session | undefined> {
      const session = this.verify(value, now);
      return session && !(await revocations.sessionRevoked(session.id)) ? session : undefined;
    },
    /** Signs `session` out everywhere: its id is revoked until the cookie would have ended anyway. */
    end(session: Session, now: number): Promise<void> {
      return revocations.revokeSession(session.id, session.expiresAt, now);
    },
    /** The signature of a notice the server shows operator `client` after a redirect. */
    signNotice(client: string, kind: 'info' | 'error', text: string): string {
      return noticeMac(client, kind, text) ?? '';
    },
    noticeValid(client: string, kind: 'info' | 'error', text: string, presented: string | null): boolean {
      const expected = noticeMac(client, kind, text);
      return expected !== undefined && presented !== null && safeEqual(expected, presented);
    },
    /** The CSRF token of a session's forms. */
    csrf(session: Session): string {
      const op = byClient.get(session.client)!;
      return mac(keyOf(op), `csrf\0${session.value}`);
    },
    csrfValid(session: Session, presented: string | undefined): boolean {
      return presented !== undefined && safeEqual(this.csrf(session), presented);
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
