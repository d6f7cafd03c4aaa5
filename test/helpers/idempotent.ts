/**
 * One send under an idempotency key, made with the claim handle in the order the pipeline
 * (src/notification/pipeline.ts) uses it: claim, prepare, then either the record carrying the
 * completion or `sending`, the send and the completion; a throw before the provider call
 * releases the key, one after it is `fail`ed. The idempotency tests hold the claim protocol
 * through it, with sends small enough to count.
 */
import { claimKey, type ClaimOptions } from '../../src/notification/idempotency.js';
import { budgetLeft } from '../../src/notification/send-budget.js';
import type { ClaimCompletion } from '../../src/store/types.js';

export interface Steps<P, R> {
  prepare(): Promise<P>;
  send(prepared: P, budgetLeftMs: number): Promise<R>;
  /** A send that is only its record: writes it with the completion; undefined when the claim was lost. */
  recordCompleting?(prepared: P, claim: ClaimCompletion): Promise<R | undefined>;
}

export async function runIdempotent<P, R>(
  opts: ClaimOptions,
  stepsOrSend: Steps<P, R> | (() => Promise<R>),
): Promise<{ result: R; replayed: boolean }> {
  const steps: Steps<P | undefined, R> =
    typeof stepsOrSend === 'function' ? { prepare: async () => undefined, send: () => stepsOrSend() } : stepsOrSend;
  const now = opts.now ?? Date.now;
  const startedAt = opts.startedAt ?? now();
  const deadline = startedAt + opts.budgetMs;
  const claimed = await claimKey<R>({ ...opts, startedAt });
  if (claimed.kind === 'opted_out') throw new Error(`opted out: ${claimed.recipient}`);
  if (claimed.kind === 'replay') return { result: claimed.result, replayed: true };
  if (claimed.kind === 'abandoned') {
    const err = claimed.handle.abandoned(claimed.notificationId);
    await claimed.handle.keepFailure(err);
    throw err;
  }
  const claim = claimed.handle;
  let prepared: P | undefined;
  let left: number;
  try {
    prepared = await steps.prepare();
    left = budgetLeft(deadline, now(), opts.budgetMs, opts.via);
    if (steps.recordCompleting) {
      // The result is the record's; the completion stores it under the key.
      const result = await steps.recordCompleting(prepared, claim.completion(undefined as R));
      if (result === undefined) throw claim.lost();
      return { result, replayed: false };
    }
    await claim.markSending(opts.notificationId);
    left = budgetLeft(deadline, now(), opts.budgetMs, opts.via);
  } catch (err) {
    await claim.release();
    throw err;
  }
  let result: R;
  try {
    result = await steps.send(prepared, left);
  } catch (err) {
    await claim.fail(err);
    throw err;
  }
  await claim.complete(result);
  return { result, replayed: false };
}
