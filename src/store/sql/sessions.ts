/** The console's signed-out sessions (migration 22), the same on both engines. */
import { statement } from './dialect.js';

export const REVOKE_SESSION = statement(
  'revoke-session',
  'INSERT INTO console_revocations (session, expires_at) VALUES ($1, $2) ON CONFLICT (session) DO NOTHING',
);
export const PURGE_REVOKED = statement('purge-revoked', 'DELETE FROM console_revocations WHERE expires_at <= $1');
export const SESSION_REVOKED = statement('session-revoked', 'SELECT 1 AS revoked FROM console_revocations WHERE session = $1');
