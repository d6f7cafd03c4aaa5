/**
 * What an HTTP provider adapter knows when its request failed without an answer (a
 * connection error, a timeout, the budget's abort), turned into a provider error: nothing
 * was sent when the request never left or could not connect (safe to retry); once it may
 * have reached the provider, the message may be there (never retried). Shared by the
 * Slack and Twilio adapters; each decides `reached` from what its client lets it see.
 */
import { DeliveryUnknownError, ProviderTransientError, type ProviderError } from './errors.js';

/** Errors raised before a byte could reach the provider: safe to retry. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_INVALID_URL']);

/** Names of the aborts a failed request may carry instead of a code. */
const ABORT_NAMES = new Set(['BudgetExceededError', 'AbortError', 'TimeoutError']);

/**
 * The first string `code` (or abort name) down the error's `original`/`cause` chain; a
 * client's own wrapper codes (`skip`) are looked through to the network error beneath.
 */
export function rootNetworkCode(err: unknown, skip: (code: string) => boolean = () => false): string | undefined {
  let cur: unknown = err;
  for (let i = 0; i < 5 && cur && typeof cur === 'object'; i++) {
    const c = cur as { code?: unknown; name?: unknown; cause?: unknown; original?: unknown };
    if (typeof c.code === 'string' && !skip(c.code)) return c.code;
    if (typeof c.name === 'string' && ABORT_NAMES.has(c.name)) return c.name;
    cur = c.original ?? c.cause;
  }
  return undefined;
}

export interface NetworkFailureFacts {
  /** The request may have reached the provider (it was handed to the network and could connect). */
  reached: boolean;
  /** The send's budget ended the request. */
  aborted: boolean;
  /** From rootNetworkCode. */
  code: string | undefined;
}

/** `label`: the provider as a sentence names it ("Slack", "Twilio"). */
export function networkFailure(provider: string, label: string, err: unknown, facts: NetworkFailureFacts): ProviderError {
  const { code } = facts;
  if (!facts.reached) {
    const why = facts.aborted ? "the send's budget ran out before the request was sent" : `could not reach ${label} (${code ?? 'error'})`;
    return new ProviderTransientError(provider, `${why}; nothing was sent`, { vendorCode: code, cause: err });
  }
  if (code !== undefined && NOT_SENT_CODES.has(code)) {
    return new ProviderTransientError(provider, `could not reach ${label} (${code})`, { vendorCode: code, cause: err });
  }
  const why =
    facts.aborted || code === 'BudgetExceededError'
      ? "the send's budget ran out while the request was in flight"
      : `no answer from ${label} after the request was sent (${code ?? 'error'})`;
  return new DeliveryUnknownError(provider, why, code, err);
}
