/**
 * Exactly-once sends under an idempotency key (DESIGN section 1). The key is claimed in the
 * store before the provider is called, so duplicates across processes that share a store
 * cause one provider call:
 * - the first caller claims, sends, and stores the result;
 * - a duplicate (same key, same payload hash) replays a finished result, or waits for a
 *   pending one, polling up to `budgetMs`; still unresolved then: IDEMPOTENCY_IN_PROGRESS,
 *   with `retry_after_s` set to when the claim would count as abandoned;
 * - a pending claim older than `budgetMs` was left by a process that died (sends are
 *   bounded by the same budget), and the next call to arrive takes it over. A caller that
 *   is already waiting does not take over mid-wait: its own send would then overrun its
 *   budget, so it answers IN_PROGRESS and its retry takes over;
 * - a different payload under a live key is IDEMPOTENCY_CONFLICT;
 * - a send that throws releases the claim, so a retry (or a waiting duplicate) may send;
 *   except DELIVERY_UNKNOWN (the provider may have sent it): that outcome is stored like a
 *   result and every duplicate within the ttl gets the same error, so a retry under the key
 *   can never send a second copy.
 */
import { NotifyError, type ErrorCode, type ToolErrorBody } from '../errors.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const DEFAULT_POLL_MS = 50;

export interface IdempotentOptions {
  store: Store;
  key: string;
  /** Hash of the normalised payload; the same key with another hash is a conflict. */
  payloadHash: string;
  /** The send's time budget: how long a duplicate waits, and when a pending claim is abandoned. */
  budgetMs: number;
  /** How long a key is remembered (default 24 h). */
  ttlMs?: number;
  now?: () => number;
  /** How often a waiting duplicate looks at the claim again (default 50 ms). */
  pollMs?: number;
  /** Where to report a send that succeeded but whose result could not be stored. */
  log?: Logger;
  /** Failures kept under the key and replayed instead of released (default: DELIVERY_UNKNOWN). */
  isFinalFailure?: (err: unknown) => boolean;
}

/** How a final failure is stored in place of a result. */
interface StoredFailure {
  notify_error: ToolErrorBody;
}

const deliveryUnknown = (err: unknown) => err instanceof NotifyError && err.code === 'DELIVERY_UNKNOWN';

function isStoredFailure(v: unknown): v is StoredFailure {
  return typeof v === 'object' && v !== null && Object.keys(v).length === 1 && 'notify_error' in v;
}

function replayFailure(body: ToolErrorBody): NotifyError {
  const details: { path?: string; via?: string; retryAfterS?: number } = {};
  if (body.path !== undefined) details.path = body.path;
  if (body.via !== undefined) details.via = body.via;
  if (body.retry_after_s !== undefined) details.retryAfterS = body.retry_after_s;
  return new NotifyError(body.code as ErrorCode, body.message, details);
}

export interface IdempotentOutcome<R> {
  result: R;
  replayed: boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function runIdempotent<R>(opts: IdempotentOptions, send: () => Promise<R>): Promise<IdempotentOutcome<R>> {
  const { store, key, payloadHash, budgetMs } = opts;
  const ttlMs = opts.ttlMs ?? IDEMPOTENCY_TTL_MS;
  const now = opts.now ?? Date.now;
  const pollMs = Math.max(1, opts.pollMs ?? DEFAULT_POLL_MS);
  const deadline = now() + budgetMs;
  // Only the first look may take over an abandoned claim; see the header.
  let staleAfterMs = budgetMs;

  for (;;) {
    const claim = await store.claimIdempotency(key, payloadHash, now(), { ttlMs, staleAfterMs });
    staleAfterMs = Number.MAX_SAFE_INTEGER; // finite: it travels as a BIGINT to PostgreSQL

    if (claim.kind === 'claimed') {
      let result: R;
      try {
        result = await send();
      } catch (err) {
        const keep = (opts.isFinalFailure ?? deliveryUnknown)(err) && err instanceof NotifyError;
        const settle = keep
          ? store.completeIdempotency(key, { notify_error: err.toBody() } satisfies StoredFailure)
          : store.releaseIdempotency(key);
        await settle.catch((storeErr: unknown) =>
          opts.log?.warn('idempotency claim not settled after a failed send', { error: (storeErr as Error).message }),
        );
        throw err;
      }
      try {
        await store.completeIdempotency(key, result);
      } catch (err) {
        // The message went out: answering with an error would invite a retry that sends
        // again. Duplicates will wait, then take the claim over once its budget passes.
        opts.log?.error('idempotency result not stored after a send', { error: (err as Error).message });
      }
      return { result, replayed: false };
    }

    if (claim.payload_hash !== payloadHash) {
      throw new NotifyError(
        'IDEMPOTENCY_CONFLICT',
        `idempotency_key "${key}" was already used with a different payload in the last ${Math.round(ttlMs / 3_600_000)} h. Use a new key, or resend the original payload unchanged to get its result.`,
        { path: '/idempotency_key' },
      );
    }

    if (claim.state === 'done') {
      if (isStoredFailure(claim.result)) throw replayFailure(claim.result.notify_error);
      return { result: claim.result as R, replayed: true };
    }

    const t = now();
    if (t >= deadline) {
      const retryAfterS = Math.max(1, Math.ceil((claim.claimed_at + budgetMs - t) / 1000));
      throw new NotifyError(
        'IDEMPOTENCY_IN_PROGRESS',
        `a send with idempotency_key "${key}" is still in progress. Retry the same call in ${retryAfterS} s to get its result; nothing was sent twice.`,
        { path: '/idempotency_key', retryAfterS },
      );
    }
    await sleep(Math.min(pollMs, deadline - t));
  }
}
