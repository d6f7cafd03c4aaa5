/**
 * At most one send under an idempotency key, across every process sharing the store: the
 * protocol (claim, phases, fencing, takeover) is in docs/architecture.md, "One send per key".
 */
import { setTimeout as delay } from 'node:timers/promises';
import { errors, NotifyError, type ErrorCode, type ToolErrorBody } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { writeAfterAnswer } from './after-answer.js';
import type { ClaimCompletion, ClaimsPort } from '../store/ports/claims.js';
import type { OptOutCheck } from '../store/ports/contacts.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const DEFAULT_POLL_MS = 50;

export interface ClaimOptions {
  store: ClaimsPort;
  key: string;
  /** The key as the client sent it, for messages (`key` may be scoped, e.g. by client); default `key`. */
  sentKey?: string;
  /** Hash of the normalised payload; the same key with another hash is a conflict. */
  payloadHash: string;
  /**
   * The send's time budget, counted from `startedAt`: how long a duplicate waits, and when a
   * pending claim counts as abandoned.
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
  /** Looked up with the first claim, in its round trip: an opted-out recipient is answered, and nothing is claimed. */
  optOut?: OptOutCheck;
  /** The notification this call would send, carried by the claim row so that a taker can name it. */
  notificationId?: string;
}

/**
 * What claiming a key gives: this call owns it; or it took over a claim whose provider call
 * may have started (`abandoned`: it must not send, and answers `abandoned()`, under the
 * notification id that call was sending under when the row names it); a finished send's
 * result to replay; or an opted-out recipient.
 */
export type KeyClaim<R> =
  | { kind: 'owner'; handle: ClaimHandle<R> }
  | { kind: 'abandoned'; handle: ClaimHandle<R>; notificationId: string | undefined }
  | { kind: 'replay'; result: R }
  | { kind: 'opted_out'; recipient: string };

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
  return new NotifyError(
    body.code as ErrorCode,
    `${body.message} (Replayed for idempotency_key "${key}": this call sent nothing.)`,
    details,
  );
}

/** Resolves after `ms`, or at once when `signal` aborts (Node's timer removes its listener either way). */
const sleep = (ms: number, signal?: AbortSignal) => delay(ms, undefined, { signal }).catch(() => {});

interface Run {
  opts: ClaimOptions;
  now: () => number;
  deadline: number;
  /** Fields for the errors made here. */
  details: { path: string; via?: string };
  /** The key as messages quote it: the client's own, never the scoped store key. */
  shown: string;
}

/**
 * Claims the key for this call, or answers from the claim already there: a replay, or a
 * refusal (conflict, in progress, cancelled while waiting, DELIVERY_UNKNOWN for an abandoned
 * send). The decision is the store's claim alone, one statement or one transaction.
 */
export async function claimKey<R>(opts: ClaimOptions): Promise<KeyClaim<R>> {
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
  // Only the first look, as a send's opt-out check is made once, before it waits.
  let optOut = opts.optOut;

  for (;;) {
    const claim = await store.claimIdempotency(key, payloadHash, now(), {
      ttlMs,
      staleAfterMs,
      ...(optOut ? { optOut } : {}),
      ...(opts.notificationId !== undefined ? { notificationId: opts.notificationId } : {}),
    });
    staleAfterMs = Number.MAX_SAFE_INTEGER; // finite: it travels as a BIGINT to PostgreSQL
    optOut = undefined;

    if (claim.kind === 'opted_out') return claim;
    if (claim.kind === 'claimed') {
      const handle = new ClaimHandle<R>(run, claim.owner);
      if (claim.phase === 'sending') return { kind: 'abandoned', handle, notificationId: claim.notification_id };
      return { kind: 'owner', handle };
    }

    if (claim.payload_hash !== payloadHash) {
      throw errors.idempotencyConflict(
        `idempotency_key "${run.shown}" was already used with a different payload in the last ${Math.round(ttlMs / 3_600_000)} h; nothing was sent. Use a new key, or resend the original payload unchanged to get its result.`,
        run.details,
      );
    }

    if (claim.state === 'done') {
      if (isStoredFailure(claim.result)) throw replayFailure(claim.result.notify_error, run.shown);
      return { kind: 'replay', result: claim.result as R };
    }

    if (opts.signal?.aborted) {
      throw errors.cancelled(
        `The call was cancelled while another call with idempotency_key "${key}" was in flight; this call sent nothing. Retry the same call to get that call's outcome.`,
        { ...run.details, cause: opts.signal.reason },
      );
    }
    const t = now();
    if (t >= run.deadline) {
      const retryAfterS = Math.max(1, Math.ceil((claim.claimed_at + budgetMs - t) / 1000));
      const state = claim.phase === 'sending' ? 'is still sending it' : 'has not reached the provider yet';
      throw errors.idempotencyInProgress(
        `Another call with idempotency_key "${run.shown}" ${state}; this call sent nothing. Retry the same call in ${retryAfterS} s to get that call's outcome.`,
        { ...run.details, retryAfterS },
      );
    }
    await sleep(Math.min(pollMs, run.deadline - t), opts.signal);
  }
}

/**
 * A key this call owns. Every write names the owner token, so one that lost the claim (it
 * was taken over) changes nothing. The owner's path: `markSending` just before the provider
 * call (or `completion` in the dry run's record), then `complete` with the result, or `fail`
 * / `release` when it did not get that far. A taker of an abandoned send `keepFailure`s its
 * `abandoned()` answer.
 */
export class ClaimHandle<R> {
  constructor(
    private readonly run: Run,
    readonly owner: string,
  ) {}

  /** The error of an owner whose claim was taken over before it reached the provider. */
  lost(): NotifyError {
    const {
      opts: { budgetMs },
      details,
      shown,
    } = this.run;
    const retryAfterS = Math.max(1, Math.ceil(budgetMs / 1000));
    return errors.idempotencyInProgress(
      `This call ran past its ${budgetMs} ms budget before reaching the provider, and another call with idempotency_key "${shown}" took the key over; this call sent nothing. Retry the same call in ${retryAfterS} s to get that call's outcome.`,
      { ...details, retryAfterS },
    );
  }

  /**
   * Moves the claim to `sending`, immediately before the provider call, naming the
   * notification it sends (an approved send's id is the approval's). Throws `lost()` when
   * another call took the key over (this one outlived its budget, or clocks disagree): the
   * new owner decides what is sent.
   */
  async markSending(notificationId?: string): Promise<void> {
    if (!(await this.run.opts.store.markIdempotencySending(this.run.opts.key, this.owner, notificationId))) throw this.lost();
  }

  /** The completion a record write carries (a dry run: its record is its send). */
  completion(result: R): ClaimCompletion {
    return { key: this.run.opts.key, owner: this.owner, result };
  }

  /**
   * Stores the send's result; never throws: the message went out, and an error would invite a
   * resend. A store that is down gets it again; if it never does, duplicates take the claim over
   * once its budget passes and answer DELIVERY_UNKNOWN (the phase says the provider may have been called).
   */
  async complete(result: R): Promise<void> {
    const { store, key } = this.run.opts;
    // An error, not a warning: a message went out and its key does not say so yet.
    await this.settle(() => store.completeIdempotency(key, this.owner, result), 'result after a send', 'error');
  }

  /** After a failed send: a final failure (the provider may have sent it) is kept under the key; any other is released. */
  async fail(err: unknown): Promise<void> {
    if ((this.run.opts.isFinalFailure ?? deliveryUnknown)(err) && err instanceof NotifyError) await this.keepFailure(err);
    else await this.release();
  }

  /** Drops the claim, so a retry (or a waiting duplicate) may send. */
  async release(): Promise<void> {
    const { store, key } = this.run.opts;
    await this.settle(() => store.releaseIdempotency(key, this.owner), 'release');
  }

  /**
   * The answer of a taker whose claim's owner died after its provider call may have started:
   * sending again could deliver twice. `notificationId`: what that call was sending.
   */
  abandoned(notificationId: string | undefined): NotifyError {
    const { opts } = this.run;
    const details: { via?: string; notificationId?: string } = {};
    if (opts.via !== undefined) details.via = opts.via;
    if (notificationId !== undefined) details.notificationId = notificationId;
    opts.log?.warn('took over an abandoned idempotency claim whose provider call may have started; answering DELIVERY_UNKNOWN', {
      key: opts.key,
      ...(notificationId !== undefined ? { notificationId } : {}),
    });
    return errors.deliveryUnknown(
      `An earlier call with idempotency_key "${this.run.shown}" stopped (its process likely died) after its provider call may have started, so the message may or may not have been sent. This call sent nothing, and no call will send it again under this key; check with the recipient before sending it under a new key.`,
      details,
    );
  }

  /** Keeps `err` under the key in place of a result, so every later duplicate gets it too. */
  async keepFailure(err: NotifyError): Promise<void> {
    const { store, key } = this.run.opts;
    await this.settle(
      () => store.completeIdempotency(key, this.owner, { notify_error: err.toBody() } satisfies StoredFailure),
      'store failure',
    );
  }

  /** A fenced write after a send's outcome: its failure is logged, never thrown over the send's, and a store that is down gets it again (./after-answer.ts). */
  private async settle(write: () => Promise<boolean>, what: string, level: 'warn' | 'error' = 'warn'): Promise<void> {
    const { key, log, budgetMs } = this.run.opts;
    await writeAfterAnswer(
      async () => {
        if (!(await write()))
          log?.warn(`idempotency ${what} not written: this call no longer owns the claim (taken over during the send)`, { key });
      },
      budgetMs,
      (err, again) => log?.[level](`idempotency ${what} failed${again ? '; trying again' : ''}`, { key, error: err.message }),
    );
  }
}
