/**
 * Console sessions without server state: the cookie names the operator client and when it
 * ends, signed with HMAC-SHA256 under a key derived from that operator's own token. Every
 * replica with the same NOTIFY_HTTP_TOKENS verifies it, and removing or rotating the token
 * ends every session it opened. A form's CSRF token is derived from the session, so a page
 * from another origin (which cannot read the cookie) cannot forge one.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface OperatorToken {
  client: string;
  token: string;
}

/** A console session lasts this long after login. */
export const SESSION_MS = 8 * 3_600_000;

export interface Session {
  client: string;
  expiresAt: number;
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

export function createSessions(operators: readonly OperatorToken[]) {
  const byClient = new Map(operators.map((op) => [op.client, op]));
  return {
    /** A session cookie value for `client`, from `now`. */
    open(client: string, now: number): Session {
      const op = byClient.get(client);
      if (!op) throw new Error(`${client} is not an operator`);
      const expiresAt = now + SESSION_MS;
      const body = `${Buffer.from(client).toString('base64url')}.${expiresAt}`;
      return { client, expiresAt, value: `${body}.${mac(keyOf(op), body)}` };
    },
    /** The session a cookie value holds, if it is one of ours, its client still an operator, and not expired. */
    verify(value: string | undefined, now: number): Session | undefined {
      const m = /^([A-Za-z0-9_-]{1,200})\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
      if (!m) return undefined;
      const client = Buffer.from(m[1]!, 'base64url').toString('utf8');
      const op = byClient.get(client);
      const expiresAt = Number(m[2]);
      if (!op || !safeEqual(mac(keyOf(op), `${m[1]}.${m[2]}`), m[3]!) || expiresAt <= now) return undefined;
      return { client, expiresAt, value: value! };
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
