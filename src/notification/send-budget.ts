/**
 * A send's time budget covers its whole path: checks, idempotency, payload building and the
 * provider call. What the path spent before the provider call is not given to the provider,
 * so a send ends when its budget does, and a claim abandoned after its budget really is.
 */
import { errors, NotifyError } from '../core/errors.js';

/** The budget left at `now`, for the provider call; none left: NotifyError, and nothing was sent. */
export function budgetLeft(deadline: number, now: number, budgetMs: number, via?: string): number {
  const left = deadline - now;
  if (left > 0) return left;
  return budgetSpent(budgetMs, via);
}

function budgetSpent(budgetMs: number, via: string | undefined): never {
  // Transient and on our side: the provider was never called, so a retry is safe.
  throw errors.providerUnavailable(
    `The send's ${budgetMs} ms budget was spent before the provider was called (the server is slow or overloaded); nothing was sent. Try again in 1 s.`,
    via === undefined ? { retryAfterS: 1 } : { via, retryAfterS: 1 },
  );
}
