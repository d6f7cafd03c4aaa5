/**
 * The claims port: idempotency keys claimed before a send (fenced by an owner token), and
 * the first answer to an approval question (kept under a key of the same table).
 */
import type { OptOutCheck } from './contacts.js';

/** A person's answer to one approval question. */
export type ApprovalAnswer = 'accept' | 'decline';

/**
 * Where a pending claim stands: `claimed` while its owner has not yet called the provider
 * (it may be taken over, and the taker may send); `sending` from just before the provider
 * call on (a taker must never send: the message may have gone out).
 */
export type IdempotencyPhase = 'claimed' | 'sending';

export type IdempotencyClaim =
  /**
   * This caller owns the key; `owner` fences its later writes. `phase: 'sending'` when it took
   * over a claim whose provider call may have started: it must not send, and
   * `notification_id` (when the row carries one) is the id that call was sending under.
   * Otherwise `notification_id` is the one this claim gave.
   */
  | { kind: 'claimed'; owner: string; phase: IdempotencyPhase; notification_id?: string }
  | { kind: 'existing'; payload_hash: string; state: 'pending'; phase: IdempotencyPhase; claimed_at: number }
  | { kind: 'existing'; payload_hash: string; state: 'done'; result: unknown; claimed_at: number }
  /** A recipient of `opts.optOut` has opted out: nothing was claimed or read. */
  | { kind: 'opted_out'; recipient: string };

/** An idempotency claim completed by a record write: `owner`'s claim on `key` becomes done with `result`. */
export interface ClaimCompletion {
  key: string;
  owner: string;
  result: unknown;
}

export interface ClaimsPort {
  /**
   * Atomically claims `key` for a send (`claimed`, with a fresh owner token), or reports the
   * existing claim. A pending claim of the same payload older than `staleAfterMs` (its owner
   * died) is taken over and keeps its phase. Claims older than `ttlMs` count as absent.
   * With `optOut`, an opted-out recipient comes first (`opted_out`, nothing claimed): the
   * opt-out lookup rides in the claim's round trip. The row carries `notificationId` from
   * the claim on, except where a taken-over claim keeps `sending` (it keeps the id it was
   * sending under), so a taker can name what may have gone out.
   */
  claimIdempotency(
    key: string,
    payloadHash: string,
    now: number,
    opts: { ttlMs: number; staleAfterMs: number; optOut?: OptOutCheck; notificationId?: string },
  ): Promise<IdempotencyClaim>;
  /**
   * Moves `owner`'s pending claim to `sending`, just before the provider call, with the
   * notification id the call sends under (when given). False when `owner` no longer holds
   * the claim (it was taken over): then it must not send.
   */
  markIdempotencySending(key: string, owner: string, notificationId?: string): Promise<boolean>;
  /** Stores the result of `owner`'s send; later claims see `state: 'done'`. False (nothing written) when `owner` lost the claim. */
  completeIdempotency(key: string, owner: string, result: unknown): Promise<boolean>;
  /** Drops `owner`'s pending claim whose send failed, so that a retry may send. False when `owner` lost the claim. */
  releaseIdempotency(key: string, owner: string): Promise<boolean>;
  /**
   * Records `answer` as the answer to approval question `id` unless it has one: of answers
   * racing (a decline and an accept of one question, on any replica), the first stands. The
   * answer that stands, and whether it is this call's (`first`). Forgotten after `ttlMs`.
   */
  answerApproval(id: string, answer: ApprovalAnswer, now: number, ttlMs: number): Promise<{ answer: ApprovalAnswer; first: boolean }>;
}
