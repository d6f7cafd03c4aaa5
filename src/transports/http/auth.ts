/**
 * Bearer tokens from NOTIFY_HTTP_TOKENS. The presented token is compared with every
 * configured one, always all of them, as SHA-256 digests with timingSafeEqual: equal
 * lengths whatever was sent, and no early exit that would time which token matched.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { HttpToken } from '../../config/config.js';

export type AuthResult = { ok: true; token: HttpToken } | { ok: false; reason: 'missing' | 'invalid' };

export interface Authenticator {
  /** True when tokens are configured, so /mcp needs one. */
  readonly required: boolean;
  check(authorization: string | undefined): AuthResult;
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

export function createAuthenticator(tokens: readonly HttpToken[]): Authenticator {
  const known = tokens.map((token) => ({ token, digest: digest(token.token) }));
  return {
    required: known.length > 0,
    check(authorization) {
      const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
      if (!m) return { ok: false, reason: 'missing' };
      const presented = digest(m[1]!);
      let match: HttpToken | undefined;
      for (const k of known) {
        if (timingSafeEqual(presented, k.digest) && !match) match = k.token;
      }
      return match ? { ok: true, token: match } : { ok: false, reason: 'invalid' };
    },
  };
}

/** The WWW-Authenticate value for a 401 (RFC 6750: no error code when none was sent). */
export function challenge(reason: 'missing' | 'invalid'): string {
  return reason === 'missing'
    ? 'Bearer realm="notify-mcp"'
    : 'Bearer realm="notify-mcp", error="invalid_token", error_description="The token is not one of NOTIFY_HTTP_TOKENS"';
}
