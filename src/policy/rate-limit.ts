/**
 * Rate limits per client and channel (NOTIFY_RATE_LIMITS, e.g. `sms=20/h,email=100/h`),
 * as the pipeline's RateGate. A sliding window over the timestamps of admitted sends, kept
 * in memory: the limits hold per process, so N replicas admit up to N times the limit.
 *
 * `via=*` is a cap on a client's sends over all channels together, on top of any
 * per-channel limit. A refused send is not counted, so a client that keeps retrying
 * early does not push its own window further out.
 */
import type { RateLimit } from '../config.js';
import { NotifyError } from '../errors.js';
import type { RateGate } from '../notification/pipeline.js';

interface Window {
  limit: RateLimit;
  /** Admission times inside the window, oldest first; at most `limit.limit` of them. */
  times: number[];
}

export interface MemoryRateGate extends RateGate {
  /** Keys currently tracked (for tests and metrics). */
  size(): number;
}

const ANONYMOUS = '(anonymous)';

export function createRateGate(limits: readonly RateLimit[]): MemoryRateGate | undefined {
  if (limits.length === 0) return undefined;
  const windows = new Map<string, Window>();
  let lastSweep = 0;

  const windowFor = (client: string, limit: RateLimit): Window => {
    const key = `${client}\u0000${limit.via}\u0000${limit.windowMs}`;
    let w = windows.get(key);
    if (!w) windows.set(key, (w = { limit, times: [] }));
    return w;
  };
  const expire = (w: Window, now: number) => {
    const from = now - w.limit.windowMs;
    let i = 0;
    while (i < w.times.length && w.times[i]! <= from) i++;
    if (i > 0) w.times.splice(0, i);
  };
  // Clients come and go (clientInfo names are self-reported); drop empty windows now and then.
  const sweep = (now: number) => {
    if (now - lastSweep < 60_000) return;
    lastSweep = now;
    for (const [key, w] of windows) {
      expire(w, now);
      if (w.times.length === 0) windows.delete(key);
    }
  };

  return {
    check(client, via, now) {
      sweep(now);
      const who = client ?? ANONYMOUS;
      const applicable = limits.filter((l) => l.via === via || l.via === '*').map((l) => windowFor(who, l));
      let retryAfterMs = 0;
      let hit: RateLimit | undefined;
      for (const w of applicable) {
        expire(w, now);
        if (w.times.length >= w.limit.limit) {
          const wait = w.times[0]! + w.limit.windowMs - now;
          if (wait > retryAfterMs) [retryAfterMs, hit] = [wait, w.limit];
        }
      }
      if (hit) {
        const retryAfterS = Math.max(1, Math.ceil(retryAfterMs / 1000));
        const scope = hit.via === '*' ? 'all channels' : via;
        throw new NotifyError(
          'RATE_LIMITED',
          `Rate limit reached for ${who} on ${scope}: ${hit.limit} per ${describeWindow(hit.windowMs)}. Nothing was sent; retry after ${retryAfterS} s.`,
          { via, retryAfterS },
        );
      }
      for (const w of applicable) w.times.push(now);
    },
    size: () => windows.size,
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
