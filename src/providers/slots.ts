/**
 * A provider's bound on requests in flight, and the only queue a send waits in. The vendor
 * clients queue too (the Slack client's p-queue, an HTTP agent's socket limit, nodemailer's
 * pool), and a request held there goes out whenever it reaches the front, even after its call
 * has answered. Here a waiter whose budget ends first is dropped unsent, and the clients are
 * configured so that their own queues never hold anything.
 */
import { untilAborted } from './abort.js';
import { ProviderBusyError, ProviderTransientError, SendCancelledError } from './errors.js';
import type { SendContext } from './types.js';

/**
 * A waiter granted a slot with less budget than this left does not start its request, nor
 * does a retry (src/providers/retry.ts): it would almost surely be cut off mid-flight and
 * answer DELIVERY_UNKNOWN, where not starting it answers a code that says nothing was sent.
 * A call's first attempt, when it need not wait, starts with whatever budget it was given.
 */
export const MIN_SEND_WINDOW_MS = 250;

/** Requests in flight at once per provider unless NOTIFY_PROVIDER_CONCURRENCY says otherwise. */
export const DEFAULT_PROVIDER_CONCURRENCY = 5;

export class Slots {
  private busy = 0;
  /** Waiters in arrival order; each takes over the slot of the call that releases it. */
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly provider: string,
    readonly limit: number,
    private readonly minWindowMs = MIN_SEND_WINDOW_MS,
  ) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`${provider}: the concurrency limit must be a positive integer, got ${limit}`);
    }
  }

  /**
   * Starts `call` once a slot is free and answers with it, or with `signal.reason` when the
   * budget ends first. The slot stays taken until the call itself settles, so an aborted
   * request that is still winding down is counted. Throws ProviderBusyError (nothing sent)
   * when the budget runs out in the queue, SendCancelledError (nothing sent) when the call
   * is cancelled before its request starts.
   */
  async run<T>(ctx: SendContext, call: () => Promise<T>): Promise<T> {
    if (ctx.cancel?.aborted) throw new SendCancelledError(this.provider);
    if (ctx.signal.aborted) {
      throw new ProviderTransientError(this.provider, "the send's budget ran out before the request started; nothing was sent", {
        cause: ctx.signal.reason,
      });
    }
    await this.acquire(ctx);
    let pending: Promise<T>;
    try {
      await ctx.starting?.();
      pending = call();
    } catch (err) {
      this.release();
      throw err;
    }
    pending.then(
      () => this.release(),
      () => this.release(),
    );
    return untilAborted(pending, ctx.signal);
  }

  private acquire(ctx: SendContext): Promise<void> {
    if (this.busy < this.limit && this.waiting.length === 0) {
      this.busy++;
      return Promise.resolve();
    }
    const started = Date.now();
    return new Promise<void>((resolve, reject) => {
      const leave = (err: Error) => {
        clearTimeout(startTimer);
        ctx.signal.removeEventListener('abort', onAbort);
        ctx.cancel?.removeEventListener('abort', onCancel);
        const at = this.waiting.indexOf(take);
        if (at !== -1) this.waiting.splice(at, 1);
        reject(err);
      };
      const onAbort = () => leave(new ProviderBusyError(this.provider, this.limit, Date.now() - started));
      const startTimer = ctx.startBy === undefined ? undefined : setTimeout(onAbort, Math.max(0, ctx.startBy - Date.now()));
      const onCancel = () => leave(new SendCancelledError(this.provider));
      // Called by release() with its slot handed over.
      const take = () => {
        clearTimeout(startTimer);
        ctx.signal.removeEventListener('abort', onAbort);
        ctx.cancel?.removeEventListener('abort', onCancel);
        const left = ctx.deadline === undefined ? Infinity : ctx.deadline - Date.now();
        const late = ctx.startBy !== undefined && Date.now() > ctx.startBy;
        if (ctx.signal.aborted || ctx.cancel?.aborted || left < this.minWindowMs || late) {
          this.release();
          reject(
            ctx.cancel?.aborted
              ? new SendCancelledError(this.provider)
              : new ProviderBusyError(this.provider, this.limit, Date.now() - started),
          );
          return;
        }
        resolve();
      };
      this.waiting.push(take);
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      ctx.cancel?.addEventListener('abort', onCancel, { once: true });
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.busy--;
  }

  /** Requests running and sends waiting, as the tests observe them. */
  get stats(): { inFlight: number; waiting: number } {
    return { inFlight: this.busy, waiting: this.waiting.length };
  }
}
