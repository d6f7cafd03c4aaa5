/**
 * Rate limits per client and channel (NOTIFY_RATE_LIMITS, e.g. `sms=20/h,email=100/h`) as the
 * pipeline's RateGate: sliding windows counted in the store (Store.admitRate), so every
 * process sharing the store shares one count.
 */
import { errors, NotifyError } from '../core/errors.js';
import type { CountersPort, RateBucket } from '../store/ports/counters.js';

/** One limit of NOTIFY_RATE_LIMITS. */
export interface RateLimit {
  /** Channel name, or `*` for every channel. */
  via: string;
  limit: number;
  windowMs: number;
}

/** Checked once the idempotency key is claimed, before the payload is built; rejects with NotifyError('RATE_LIMITED'). */
export interface RateGate {
  check(client: string | null, via: string, now: number): Promise<void>;
}

const ANONYMOUS = '(anonymous)';

/**
 * `via=*` is a cap on a client's sends over all channels together, on top of any per-channel
 * limit. A send is admitted into all of its windows or none, and a refused send is not
 * counted, so a client that keeps retrying early does not push its own window further out.
 */
export function createRateGate(limits: readonly RateLimit[], store: CountersPort): RateGate | undefined {
  if (limits.length === 0) return undefined;
  // Two entries for one channel and window would be one bucket counted twice: keep the stricter.
  const byWindow = new Map<string, RateLimit>();
  for (const l of limits) {
    const id = `${l.via}\u0000${l.windowMs}`;
    const seen = byWindow.get(id);
    if (!seen || l.limit < seen.limit) byWindow.set(id, l);
  }
  const distinct = [...byWindow.values()];

  return {
    async check(client, via, now) {
      const who = client ?? ANONYMOUS;
      const applicable = distinct.filter((l) => l.via === via || l.via === '*');
      if (applicable.length === 0) return;
      const buckets: RateBucket[] = applicable.map((l) => ({
        key: JSON.stringify([who, l.via, l.windowMs]),
        limit: l.limit,
        windowMs: l.windowMs,
      }));
      const decision = await store.admitRate(buckets, now);
      if (decision.admitted) return;
      // The longest wait is the one that frees every window.
      let retryAfterMs = 0;
      let hit = applicable[0]!;
      decision.waitMs.forEach((wait, i) => {
        if (wait !== null && wait >= retryAfterMs) [retryAfterMs, hit] = [wait, applicable[i]!];
      });
      const retryAfterS = Math.max(1, Math.ceil(retryAfterMs / 1000));
      const scope = hit.via === '*' ? 'all channels' : via;
      throw errors.rateLimited(
        `Retry after ${retryAfterS} s: ${who} reached the rate limit on ${scope} (${hit.limit} per ${describeWindow(hit.windowMs)}). Nothing was sent.`,
        { via, retryAfterS },
      );
    },
  };
}

function describeWindow(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  for (const [size, name] of units) if (ms % size === 0) return ms === size ? name : `${ms / size} ${name}s`;
  return `${ms} ms`;
}
