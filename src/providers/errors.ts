/**
 * Provider failures, one class per kind, each keeping the vendor error as `cause`.
 * Adapters throw these; src/providers/retry.ts decides what to retry and maps them to the
 * tool's error codes.
 */

/**
 * Where one request of a send went: what the delivery log names (an SMTP relay as host:port,
 * never its credentials; a Twilio sender; a webhook target's name), and the digest of what it
 * was handed when that is not the recorded payload (a later sender, a fallback target).
 */
export interface Endpoint {
  name: string;
  /** SHA-256 (src/store/audit.ts, digestOf: the audit's own) of the request this endpoint was handed; absent: the recorded payload. */
  digest?: string;
}

export abstract class ProviderError extends Error {
  /** The endpoint that failed, stamped by the adapter that called it (a failover provider has several). */
  endpoint?: Endpoint;

  constructor(
    readonly provider: string,
    message: string,
    readonly vendorCode?: string | number,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

/** Permanent: the provider refused this message; sending it again would fail the same way. */
export class ProviderRejectedError extends ProviderError {
  override readonly name = 'ProviderRejectedError';
}

/** Transient: 429, 5xx, connection resets, SMTP 4xx. Safe to retry. */
export class ProviderTransientError extends ProviderError {
  override readonly name = 'ProviderTransientError';
  constructor(
    provider: string,
    message: string,
    readonly opts: { retryAfterMs?: number; rateLimited?: boolean; vendorCode?: string | number; cause?: unknown } = {},
  ) {
    super(provider, message, opts.vendorCode, opts.cause);
  }
}

/** The message may have been handed over (timeout after sending): never retried. */
export class DeliveryUnknownError extends ProviderError {
  override readonly name = 'DeliveryUnknownError';
}

/** The recipient opted out at the provider (Twilio 21610, replied STOP). */
export class RecipientOptedOutError extends ProviderError {
  override readonly name = 'RecipientOptedOutError';
}

/** Nothing was sent: the caller cancelled the call while its request waited for a slot. */
export class SendCancelledError extends ProviderError {
  override readonly name = 'SendCancelledError';
  constructor(provider: string) {
    super(provider, `the call was cancelled before its ${provider} request started`);
  }
}

/**
 * Nothing was sent: every one of this server's slots for the provider stayed busy until the
 * send's budget was spent (or too little of it was left to start a request). Not retried
 * within the budget: the wait already used it.
 */
export class ProviderBusyError extends ProviderError {
  override readonly name = 'ProviderBusyError';
  constructor(
    provider: string,
    /** Requests this server lets run at once against the provider. */
    readonly limit: number,
    /** How long the send waited for a slot. */
    readonly waitedMs: number,
  ) {
    super(provider, `all ${limit} of this server's ${provider} slots stayed busy for the ${waitedMs} ms this send waited`);
  }
}

/** `err` with the endpoint that failed stamped on it (kept when an inner adapter named it already); `err` itself. */
export function failedAt<E extends ProviderError>(err: E, endpoint: Endpoint): E {
  err.endpoint ??= endpoint;
  return err;
}
