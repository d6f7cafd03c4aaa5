/**
 * One send, retried inside one time budget. Transient failures (429, 5xx, resets, SMTP 4xx)
 * are retried with exponential backoff and full jitter, honouring Retry-After, never sleeping
 * so long that less than MIN_SEND_WINDOW_MS of the budget is left for the retry; everything
 * else ends the send at once. Provider errors become the tool's error codes here
 * (src/core/errors.ts), with the attempt history attached for the delivery log.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { NotifyError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { plural } from '../core/words.js';
import {
  DeliveryUnknownError,
  ProviderBusyError,
  ProviderError,
  ProviderRejectedError,
  ProviderTransientError,
  RecipientOptedOutError,
  SendCancelledError,
} from './errors.js';
import { MIN_SEND_WINDOW_MS } from './slots.js';
import type { Endpoint, Provider, ProviderReceipt } from './types.js';

/** `dropped`: the attempt waited for a provider slot until (almost) no budget was left; nothing was sent. */
export type AttemptOutcome = 'sent' | 'transient' | 'rate_limited' | 'rejected' | 'opted_out' | 'unknown' | 'dropped' | 'cancelled';

/** One provider call, as the delivery log records it (no payload, no vendor message). */
export interface AttemptRecord {
  attempt: number;
  outcome: AttemptOutcome;
  vendorCode?: string | number;
  latencyMs: number;
  /** The endpoint it went to (an SMTP relay, a Twilio sender, a webhook target), when the provider names it. */
  endpoint?: string;
  /** The digest of what it was handed, when that is not the recorded payload (see Endpoint). */
  digest?: string;
}

export interface RetryOptions {
  notificationId: string;
  /** Total wall time for every attempt and every wait. */
  budgetMs: number;
  log: Logger;
  /** Called before each wait: for progress notifications. `attempt` is the one that failed. */
  onRetry?(attempt: number, delayMs: number, reason: string): void;
  /** Called after each attempt, successful or not. */
  onAttempt?(record: AttemptRecord): void;
  /**
   * The caller cancelled: no attempt starts after it (a request waiting for a slot is
   * dropped, a backoff wait ends at once and no retry is made), but one under way runs on
   * within the budget.
   */
  cancel?: AbortSignal;
  /** `signal`: the cancel; a sleep may end early on it (the wait ends on it regardless). */
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
  /** In [0, 1). */
  random?(): number;
  now?(): number;
  /** First backoff ceiling; doubled per provider call up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A hard cap on provider calls besides the budget, so a fast-failing peer is not hammered (a failover call is one, whatever it tried). */
  maxAttempts?: number;
  /**
   * Called once, just before the first request is written (after any wait for a provider
   * slot): the send's idempotency claim moves to `sending` here. Its error is thrown as it is,
   * with nothing sent.
   */
  beforeRequest?: () => Promise<void>;
  /**
   * How long an attempt may wait for a provider slot (ProviderBusyError past it): a release
   * that can wait again in the outbox gives up early and keeps the rest of its budget for
   * the request, where a late start would be cut off mid-flight.
   */
  maxQueueMs?: number;
}

export interface RetryResult {
  receipt: ProviderReceipt;
  attempts: number;
  history: AttemptRecord[];
}

/** What sendWithRetry attaches to the NotifyError it throws. */
export interface SendFailureInfo {
  attempts: number;
  history: AttemptRecord[];
  provider: string;
  vendorCode?: string | number;
}

export type SendFailure = NotifyError & SendFailureInfo;

/** The attempt count and history of an error thrown by sendWithRetry, if it is one. */
export function sendFailureInfo(err: unknown): SendFailureInfo | undefined {
  if (err instanceof NotifyError && typeof (err as Partial<SendFailureInfo>).attempts === 'number') {
    const e = err as SendFailure;
    return { attempts: e.attempts, history: e.history, provider: e.provider, vendorCode: e.vendorCode };
  }
  return undefined;
}

function cancelledMessage(provider: string, failedAttempts: number): string {
  const before = failedAttempts === 0 ? '' : ` (after ${failedAttempts} attempt(s) that failed without sending)`;
  return `The call was cancelled before ${provider} was called${before}; nothing was sent.`;
}

/** Thrown into an attempt's signal when the budget ends. */
export class BudgetExceededError extends Error {
  override readonly name = 'BudgetExceededError';
}

/**
 * Resolves after `ms`, or at once when `signal` aborts. Node's timer removes its abort
 * listener when it fires: a listener left on a call's cancel signal per backoff piled up
 * over retries (MaxListenersExceededWarning in the soak).
 */
const defaultSleep = (ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }).catch(() => {});

/**
 * A backoff wait that a cancel ends at once: nothing is in flight during it, so the send
 * can stop there (the loop's next check answers CANCELLED) instead of sitting out the wait.
 */
function backoff(sleep: (ms: number, signal?: AbortSignal) => Promise<void>, ms: number, cancel: AbortSignal | undefined): Promise<void> {
  if (!cancel) return sleep(ms);
  if (cancel.aborted) return Promise.resolve();
  let onAbort!: () => void;
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
    cancel.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([sleep(ms, cancel), aborted]).finally(() => cancel.removeEventListener('abort', onAbort));
}

function outcomeOf(err: unknown): AttemptOutcome {
  if (err instanceof ProviderTransientError) return err.opts.rateLimited ? 'rate_limited' : 'transient';
  if (err instanceof ProviderBusyError) return 'dropped';
  if (err instanceof SendCancelledError) return 'cancelled';
  if (err instanceof RecipientOptedOutError) return 'opted_out';
  if (err instanceof ProviderRejectedError) return 'rejected';
  return 'unknown';
}

/**
 * A send's attempts as the delivery log keeps them: one per endpoint tried (a failover
 * provider tries several in one call), each timed from where the one before it ended.
 */
function attemptLog(now: () => number, onAttempt: RetryOptions['onAttempt']) {
  const history: AttemptRecord[] = [];
  let mark = 0;
  return {
    history,
    /** A provider call starts. */
    begin() {
      mark = now();
    },
    add(outcome: AttemptOutcome, endpoint: Endpoint | undefined, vendorCode: string | number | undefined): AttemptRecord {
      const at = now();
      const record: AttemptRecord = { attempt: history.length + 1, outcome, latencyMs: at - mark };
      if (vendorCode !== undefined) record.vendorCode = vendorCode;
      if (endpoint) record.endpoint = endpoint.name;
      if (endpoint?.digest) record.digest = endpoint.digest;
      mark = at;
      history.push(record);
      onAttempt?.(record);
      return record;
    },
  };
}

/** The attempt of a failed call, from its error. */
const failedAttempt = (attempts: ReturnType<typeof attemptLog>, err: unknown): AttemptRecord =>
  err instanceof ProviderError
    ? attempts.add(outcomeOf(err), err.endpoint, err.vendorCode)
    : attempts.add(outcomeOf(err), undefined, undefined);

export async function sendWithRetry<P>(provider: Provider<P>, payload: P, opts: RetryOptions): Promise<RetryResult> {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? defaultSleep;
  const random = opts.random ?? Math.random;
  const base = opts.baseDelayMs ?? 250;
  const maxDelay = opts.maxDelayMs ?? 8_000;
  const maxAttempts = opts.maxAttempts ?? 10;
  const deadline = now() + opts.budgetMs;
  const attempts = attemptLog(now, opts.onAttempt);
  const { history } = attempts;
  const log = opts.log.child({ notificationId: opts.notificationId, provider: provider.name });
  // Each endpoint a failover provider leaves is an attempt of its own.
  const failedOver = (err: ProviderError) => log.info('provider attempt', { ...failedAttempt(attempts, err) });

  const fail = (code: NotifyError['code'], message: string, cause: unknown, retryAfterS?: number): SendFailure => {
    const err = new NotifyError(code, message, retryAfterS === undefined ? { cause } : { cause, retryAfterS });
    return Object.assign(err, {
      attempts: history.length,
      history,
      provider: provider.name,
      vendorCode: cause instanceof ProviderError ? cause.vendorCode : undefined,
    });
  };

  const start = startOnce(opts.beforeRequest);

  for (let round = 1; ; round++) {
    // Every earlier attempt failed with nothing sent (only those are retried).
    if (opts.cancel?.aborted) throw fail('CANCELLED', cancelledMessage(provider.name, history.length), opts.cancel.reason);
    const controller = new AbortController();
    const remaining = Math.max(0, deadline - now());
    const spent = () => controller.abort(new BudgetExceededError(`send budget of ${opts.budgetMs} ms ran out`));
    // A budget already spent aborts before the provider is called, so it sends nothing.
    if (remaining === 0) spent();
    const timer = setTimeout(spent, remaining);
    attempts.begin();
    let err: unknown;
    try {
      if (!provider.callsStarting) await start.starting();
      const receipt = await provider.send(payload, {
        notificationId: opts.notificationId,
        signal: controller.signal,
        // On the real clock, as the timer above: `now` may be a test's.
        deadline: Date.now() + remaining,
        starting: start.starting,
        failedOver,
        ...(opts.maxQueueMs === undefined ? {} : { startBy: Date.now() + Math.min(remaining, opts.maxQueueMs) }),
        ...(opts.cancel ? { cancel: opts.cancel } : {}),
      });
      // Debug: the caller's own line for the send ("sent") says how many attempts it took.
      log.debug('provider attempt', { ...attempts.add('sent', receipt.endpoint, undefined) });
      return { receipt, attempts: history.length, history };
    } catch (e) {
      err = e;
    } finally {
      clearTimeout(timer);
    }
    // The send could not be marked started (its claim was taken over): nothing was written.
    if (start.failure) throw start.failure.err;
    log.info('provider attempt', { ...failedAttempt(attempts, err) });

    if (!(err instanceof ProviderTransientError)) throw finalFailure(err, provider.name, history.length, opts.budgetMs, fail);
    const rateLimited = err.opts.rateLimited === true;
    const ceiling = Math.min(maxDelay, base * 2 ** (round - 1));
    const delay = Math.max(Math.floor(random() * ceiling), err.opts.retryAfterMs ?? 0);
    // A retry must have time to run after its wait: one started at the very end of the budget
    // would be cut off in flight (DELIVERY_UNKNOWN), where giving up now says nothing was sent.
    if (round >= maxAttempts || controller.signal.aborted || delay + MIN_SEND_WINDOW_MS > deadline - now()) {
      throw givenUp(err, provider.name, history.length, opts.budgetMs, Math.max(delay, base), fail);
    }
    const reason = rateLimited ? 'rate_limited' : `transient${err.vendorCode !== undefined ? `: ${err.vendorCode}` : ''}`;
    opts.onRetry?.(history.length, delay, reason);
    log.debug('provider retry', { attempt: history.length, delayMs: delay, reason });
    await backoff(sleep, delay, opts.cancel);
  }
}

/** The error that ends a send after attempt `attempt` failed with `err`, which is not transient (only those are retried). */
function finalFailure(
  err: unknown,
  provider: string,
  attempt: number,
  budgetMs: number,
  fail: (code: NotifyError['code'], message: string, cause: unknown, retryAfterS?: number) => SendFailure,
): SendFailure {
  if (err instanceof ProviderBusyError) {
    // The queue was saturated for about as long as this send waited: a hint, not a promise.
    const retryAfterS = Math.max(1, Math.ceil(err.waitedMs / 1000));
    return fail(
      'RATE_LIMITED',
      `Try again in ${retryAfterS} s; nothing was sent: this server runs at most ${plural(err.limit, `${provider} request`)} at a time, and all of them ` +
        `stayed busy for the ${err.waitedMs} ms this send waited within its ${budgetMs} ms budget.`,
      err,
      retryAfterS,
    );
  }
  if (err instanceof SendCancelledError) {
    return fail('CANCELLED', cancelledMessage(provider, attempt - 1), err);
  }
  if (err instanceof RecipientOptedOutError) {
    return fail('RECIPIENT_OPTED_OUT', `${err.message} Do not send to this recipient again unless they opt back in.`, err);
  }
  if (err instanceof ProviderRejectedError) {
    return fail('PROVIDER_REJECTED', `${provider} rejected the message: ${err.message}`, err);
  }
  // DeliveryUnknownError, or anything an adapter failed to classify: it may have gone out,
  // and a second attempt could deliver it twice.
  const detail = err instanceof DeliveryUnknownError ? err.message : 'unexpected error during the send';
  return fail(
    'DELIVERY_UNKNOWN',
    `${provider} may or may not have delivered the message (${detail}). It was not retried, to avoid a duplicate; check with the recipient before sending again.`,
    err,
  );
}

/** The error of a send whose transient failures outlasted its attempts or its budget: retry later, `waitMs` from now at the soonest. */
function givenUp(
  err: ProviderTransientError,
  provider: string,
  attempt: number,
  budgetMs: number,
  waitMs: number,
  fail: (code: NotifyError['code'], message: string, cause: unknown, retryAfterS?: number) => SendFailure,
): SendFailure {
  const rateLimited = err.opts.rateLimited === true;
  const retryAfterS = Math.max(1, Math.ceil((err.opts.retryAfterMs ?? waitMs) / 1000));
  const what = rateLimited ? 'is rate limiting these sends' : 'is unavailable';
  return fail(
    rateLimited ? 'RATE_LIMITED' : 'PROVIDER_UNAVAILABLE',
    `Try again in ${retryAfterS} s: ${provider} ${what} (${err.message}); gave up after ${plural(attempt, 'attempt')} within the ${budgetMs} ms budget.`,
    err,
    retryAfterS,
  );
}

/** `beforeRequest` as the attempts call it: once, however many attempts; a failure is kept so that it ends the send as it is. */
function startOnce(beforeRequest: (() => Promise<void>) | undefined): {
  starting: () => Promise<void>;
  failure: { err: unknown } | undefined;
} {
  let started = false;
  const start = {
    failure: undefined as { err: unknown } | undefined,
    async starting() {
      if (started || !beforeRequest) return;
      try {
        await beforeRequest();
      } catch (err) {
        start.failure = { err };
        throw err;
      }
      started = true;
    },
  };
  return start;
}
