/**
 * At most one send under an idempotency key: the same key and payload within 24 h replay
 * the first result, and a different payload under the key is a conflict. The key is claimed
 * in the store before anything is sent, so duplicates across processes that share a store
 * cause one provider call:
 * - the first caller claims (getting an owner token), prepares, moves the claim to phase
 *   `sending` with a write fenced by its token, calls the provider, and stores the result;
 * - a duplicate (same key, same payload hash) replays a finished result, or waits for a
 *   pending one, polling until its budget ends; still unresolved then: IDEMPOTENCY_IN_PROGRESS,
 *   with `retry_after_s` set to when the claim would count as abandoned;
 * - a pending claim older than `budgetMs` was left by a process that died (the whole send,
 *   preparation included, is bounded by the budget), and the next call to arrive takes it
 *   over, with a new owner token. If the dead owner never reached `sending`, the taker sends
 *   (the old owner is fenced out: its `sending` write fails, so it never sends). If it did,
 *   the message may have gone out: the taker never sends, it stores and answers
 *   DELIVERY_UNKNOWN. A caller that is already waiting does not take over mid-wait: its own
 *   send would then overrun its budget, so it answers IN_PROGRESS and its retry takes over;
 * - every write after the claim is fenced by the owner token: an owner that lost its claim
 *   never overwrites the new owner's row (it logs that instead);
 * - a different payload under a live key is IDEMPOTENCY_CONFLICT;
 * - a send that throws releases the claim, so a retry (or a waiting duplicate) may send;
 *   except a final failure (DELIVERY_UNKNOWN: the provider may have sent it), which is stored
 *   like a result, so every duplicate within the ttl gets the same error and no retry under
 *   the key can send a second copy.
 */
import { NotifyError, type ErrorCode, type ToolErrorBody } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { IdempotencyPhase, OptOutCheck, Store } from '../store/types.js';
import { budgetLeft } from './send-budget.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const DEFAULT_POLL_MS = 50;

export interface IdempotentOptions {
  store: Store;
  key: string;
  /** The key as the client sent it, for messages (`key` may be scoped, e.g. by client); default `key`. */
  sentKey?: string;
  /** Hash of the normalised payload; the same key with another hash is a conflict. */
  payloadHash: string;
  /**
   * The send's time budget, counted from `startedAt`: how long a duplicate waits, what the
   * provider call gets of it, and when a pending claim counts as abandoned.
   */
  budgetMs: number;
  /** When the call started (default: on entry). */
  startedAt?: number;
  /** How long a key is remembered (default 24 h). */
  ttlMs?: number;
  now?: () => number;
  /** How often a waiting duplicate looks at the claim again (default 50 ms). */
  pollMs?: number;
  /** Where to report writes that a lost claim could not make, and results that could not be stored. */
  log?: Logger;
  /** Failures kept under the key and replayed instead of released (default: DELIVERY_UNKNOWN). */
  isFinalFailure?: (err: unknown) => boolean;
  /** The channel, set on the errors made here. */
  via?: string;
  /** The client cancelled: a duplicate waiting for another call's outcome stops at once (it sends nothing). */
  signal?: AbortSignal;
  /** Looked up with the first claim, in its round trip: an opted-out recipient gets `refuse`'s error, and nothing is claimed. */
  optOut?: { check: OptOutCheck; refuse: (recipient: string) => Error };
}

/**
 * A send in two steps, so that the claim's phase is written between them, immediately before
 * the provider can be called.
 */
export interface SendSteps<P, R> {
  /** Everything before the provider call (payload building included); it counts against the budget. */
  prepare(): Promise<P>;
  /**
   * The provider call and what follows, within `budgetLeftMs`. Throws only when nothing was
   * sent, or with a final failure (see `isFinalFailure`) when it may have been.
   */
  send(prepared: P, budgetLeftMs: number): Promise<R>;
  /**
   * Set for a send that is only its record (a dry run): writes it and completes `owner`'s
   * claim in one store write, in place of the `sending` phase, `send` and the completion.
   * Undefined when the claim was lost (then nothing was written).
   */
  recordCompleting?(prepared: P, claim: { key: string; owner: string }): Promise<R | undefined>;
}

/** How a final failure is stored in place of a result. */
interface StoredFailure {
  notify_error: ToolErrorBody;
}

const deliveryUnknown = (err: unknown) => err instanceof NotifyError && err.code === 'DELIVERY_UNKNOWN';

function isStoredFailure(v: unknown): v is StoredFailure {
  return typeof v === 'object' && v !== null && Object.keys(v).length === 1 && 'notify_error' in v;
}

function replayFailure(body: ToolErrorBody, key: string): NotifyError {
  const details: { path?: string; via?: string; retryAfterS?: number; notificationId?: string } = {};
  if (body.notification_id !== undefined) details.notificationId = body.notification_id;
  if (body.path !== undefined) details.path = body.path;
  if (body.via !== undefined) details.via = body.via;
  if (body.retry_after_s !== undefined) details.retryAfterS = body.retry_after_s;
  return new NotifyError(body.code as ErrorCode, `${body.message} (Replayed for idempotency_key "${key}": this call sent nothing.)`, details);
}

export interface IdempotentOutcome<R> {
  result: R;
  replayed: boolean;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

interface Run {
  opts: IdempotentOptions;
  now: () => number;
  deadline: number;
  /** Fields for the errors made here. */
  details: { path: string; via?: string };
  /** The key as messages quote it: the client's own, never the scoped store key. */
  shown: string;
}

export async function runIdempotent<P, R>(
  opts: IdempotentOptions,
  stepsOrSend: SendSteps<P, R> | (() => Promise<R>),
): Promise<IdempotentOutcome<R>> {
  // A bare function is all provider call: the phase is written before it starts.
  const steps: SendSteps<P | undefined, R> =
    typeof stepsOrSend === 'function' ? { prepare: async () => undefined, send: () => stepsOrSend() } : stepsOrSend;
  const { store, key, payloadHash, budgetMs } = opts;
  const ttlMs = opts.ttlMs ?? IDEMPOTENCY_TTL_MS;
  const now = opts.now ?? Date.now;
  const pollMs = Math.max(1, opts.pollMs ?? DEFAULT_POLL_MS);
  const run: Run = {
    opts,
    now,
    deadline: (opts.startedAt ?? now()) + budgetMs,
    details: opts.via === undefined ? { path: '/idempotency_key' } : { path: '/idempotency_key', via: opts.via },
    shown: opts.sentKey ?? key,
  };
  // Only the first look may take over an abandoned claim; see the header.
  let staleAfterMs = budgetMs;
  let pendingOptOut = opts.optOut;

  for (;;) {
    // Only the first look, as a send's opt-out check is made once, before it waits.
    const optOut = pendingOptOut;
    pendingOptOut = undefined;
    const claim = await store.claimIdempotency(key, payloadHash, now(), optOut ? { ttlMs, staleAfterMs, optOut: optOut.check } : { ttlMs, staleAfterMs });
    staleAfterMs = Number.MAX_SAFE_INTEGER; // finite: it travels as a BIGINT to PostgreSQL

    if (claim.kind === 'opted_out') throw optOut!.refuse(claim.recipient);

    if (claim.kind === 'claimed') {
      const result = claim.phase === 'sending' ? await answerAbandonedSend(run, claim.owner) : await sendAsOwner(run, claim.owner, steps);
      return { result, replayed: false };
    }

    if (claim.payload_hash !== payloadHash) {
      throw new NotifyError(
        'IDEMPOTENCY_CONFLICT',
        `idempotency_key "${run.shown}" was already used with a different payload in the last ${Math.round(ttlMs / 3_600_000)} h; nothing was sent. Use a new key, or resend the original payload unchanged to get its result.`,
        run.details,
      );
    }

    if (claim.state === 'done') {
      if (isStoredFailure(claim.result)) throw replayFailure(claim.result.notify_error, run.shown);
      return { result: claim.result as R, replayed: true };
    }

    if (opts.signal?.aborted) {
      throw new NotifyError(
        'CANCELLED',
        `The call was cancelled while another call with idempotency_key "${key}" was in flight; this call sent nothing. Retry the same call to get that call's outcome.`,
        { ...run.details, cause: opts.signal.reason },
      );
    }
    const t = now();
    if (t >= run.deadline) {
      const retryAfterS = Math.max(1, Math.ceil((claim.claimed_at + budgetMs - t) / 1000));
      const state = claim.phase === 'sending' ? 'is still sending it' : 'has not reached the provider yet';
      throw new NotifyError(
        'IDEMPOTENCY_IN_PROGRESS',
        `Another call with idempotency_key "${run.shown}" ${state}; this call sent nothing. Retry the same call in ${retryAfterS} s to get that call's outcome.`,
        { ...run.details, retryAfterS },
      );
    }
    await sleep(Math.min(pollMs, run.deadline - t), opts.signal);
  }
}

function takenOver({ opts: { budgetMs }, details, shown }: Run): NotifyError {
  const retryAfterS = Math.max(1, Math.ceil(budgetMs / 1000));
  return new NotifyError(
    'IDEMPOTENCY_IN_PROGRESS',
    `This call ran past its ${budgetMs} ms budget before reaching the provider, and another call with idempotency_key "${shown}" took the key over; this call sent nothing. Retry the same call in ${retryAfterS} s to get that call's outcome.`,
    { ...details, retryAfterS },
  );
}

/** The owner's path: prepare, fence the phase, send, store the outcome. */
async function sendAsOwner<P, R>(run: Run, owner: string, steps: SendSteps<P, R>): Promise<R> {
  const { store, key, budgetMs, log } = run.opts;
  let prepared: P;
  let left: number;
  try {
    prepared = await steps.prepare();
    budgetLeft(run.deadline, run.now(), budgetMs, run.details.via);
    if (steps.recordCompleting) {
      const result = await steps.recordCompleting(prepared, { key, owner });
      if (result === undefined) throw takenOver(run);
      return result;
    }
    // Our claim was taken over (we outlived our budget, or clocks disagree): the new owner
    // decides what is sent, and we must not.
    if (!(await store.markIdempotencySending(key, owner))) throw takenOver(run);
    // The store write took time too.
    left = budgetLeft(run.deadline, run.now(), budgetMs, run.details.via);
  } catch (err) {
    await settle(run, owner, () => store.releaseIdempotency(key, owner), 'release');
    throw err;
  }

  let result: R;
  try {
    result = await steps.send(prepared, left);
  } catch (err) {
    if ((run.opts.isFinalFailure ?? deliveryUnknown)(err) && err instanceof NotifyError) {
      await settle(run, owner, () => store.completeIdempotency(key, owner, { notify_error: err.toBody() } satisfies StoredFailure), 'store failure');
    } else {
      await settle(run, owner, () => store.releaseIdempotency(key, owner), 'release');
    }
    throw err;
  }
  try {
    if (!(await store.completeIdempotency(key, owner, result))) {
      log?.warn('idempotency claim was taken over during the send; its result is not stored under the key', { key });
    }
  } catch (err) {
    // The message went out: answering with an error would invite a retry that sends
    // again. Duplicates will wait, then take the claim over once its budget passes, and
    // answer DELIVERY_UNKNOWN (the phase says the provider may have been called).
    log?.error('idempotency result not stored after a send', { key, error: (err as Error).message });
  }
  return result;
}

/**
 * Took over a claim whose owner died after its provider call may have started: sending
 * again could deliver twice. The answer is stored, so later duplicates get it too.
 */
async function answerAbandonedSend(run: Run, owner: string): Promise<never> {
  const { store, key, log } = run.opts;
  const err = new NotifyError(
    'DELIVERY_UNKNOWN',
    `An earlier call with idempotency_key "${run.shown}" stopped (its process likely died) after its provider call may have started, so the message may or may not have been sent. This call sent nothing, and no call will send it again under this key; check with the recipient before sending it under a new key.`,
    run.opts.via === undefined ? {} : { via: run.opts.via },
  );
  log?.warn('took over an abandoned idempotency claim whose provider call may have started; answering DELIVERY_UNKNOWN', { key });
  await settle(run, owner, () => store.completeIdempotency(key, owner, { notify_error: err.toBody() } satisfies StoredFailure), 'store failure');
  throw err;
}

/** A fenced write after a failed or refused send: its own failure is logged, never thrown over the send's. */
async function settle(run: Run, owner: string, write: () => Promise<boolean>, what: string): Promise<void> {
  const { key, log } = run.opts;
  try {
    if (!(await write())) log?.warn(`idempotency ${what} skipped: this call no longer owns the claim`, { key });
  } catch (err) {
    log?.warn(`idempotency ${what} failed`, { key, error: (err as Error).message });
  }
}
