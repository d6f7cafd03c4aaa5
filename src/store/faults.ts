/**
 * Store faults classified at the store boundary: a driver error that means "the database
 * is unreachable or cannot write right now" becomes a StoreUnavailableError, so the layers
 * above can answer a coded, retryable error instead of a bug's INTERNAL_ERROR. Anything
 * else (a constraint we broke, bad SQL) passes through unchanged: that is a bug.
 */
import { StoreError, StoreUnavailableError } from './errors.js';

/** Node socket errors: the connection to PostgreSQL broke or could not be made. */
const SOCKET_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
]);

/**
 * SQLSTATE classes and codes of a transient server-side condition: 08 connection exception,
 * 53 insufficient resources (disk full, too many connections), 57P01-03 shutting down or
 * starting up, 40001/40P01 serialization failure and deadlock (the statement was rolled back).
 */
const PG_TRANSIENT = /^(08...|53...|57P0[1-3]|40001|40P01)$/;

/** pg's own errors for a connection that broke, timed out or was never made (they carry no code). */
const PG_CONNECTION_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection refused)/i;

/**
 * SQLite result codes, extended ones included by prefix: busy or locked past the busy
 * timeout, out of space (or `max_page_count`), an I/O error, the file not openable, memory.
 */
const SQLITE_TRANSIENT = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|NOMEM)(_|$)/;

/** The StoreUnavailableError for `err`, or undefined when `err` is not a transient store fault. */
export function classifyStoreFault(err: unknown, store: string): StoreUnavailableError | undefined {
  if (err instanceof StoreUnavailableError) return err;
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  const transient =
    typeof code === 'string'
      ? SOCKET_CODES.has(code) || PG_TRANSIENT.test(code) || SQLITE_TRANSIENT.test(code)
      : !(err instanceof StoreError) && PG_CONNECTION_MESSAGE.test(err.message);
  if (!transient) return undefined;
  const reason = typeof code === 'string' ? `${code}: ${err.message}` : err.message;
  return new StoreUnavailableError(store, reason.slice(0, 200), { cause: err });
}

/**
 * Runs `call` of store `kind`, its transient faults rethrown as StoreUnavailableError (the
 * `around` of ./wrap.ts's storeThrough, for every method).
 */
export async function classifyingFaults<T>(kind: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw classifyStoreFault(err, kind) ?? err;
  }
}
