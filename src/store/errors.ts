/** Failures of the store itself (not of a caller's request): bad schema version, bad URL. */
export class StoreError extends Error {
  override readonly name: string = 'StoreError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** How long a caller is told to wait before retrying a store that is down: a hint, not a promise. */
export const STORE_RETRY_AFTER_S = 2;

/**
 * The database is down or cut off for now (connection reset or refused, PostgreSQL
 * shutting down or out of connections, SQLite busy past its timeout, out of space, or an
 * I/O error): the same operation may succeed later. A read did not happen; a write most
 * likely did not, but one whose connection was cut after its commit was sent may have
 * committed (PostgreSQL), so a caller whose answer depends on it says "may or may not".
 * Thrown by every store method in place of the driver's error (src/store/faults.ts).
 */
export class StoreUnavailableError extends StoreError {
  override readonly name = 'StoreUnavailableError';
  readonly retryAfterS = STORE_RETRY_AFTER_S;
  constructor(
    readonly store: string,
    /** What the driver said, for logs (no query text, no values). */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`the ${store} store is unavailable (${reason})`, options);
  }
}
