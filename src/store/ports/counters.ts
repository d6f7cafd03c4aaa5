/** The counters port: rate-limit windows and send caps, shared by every process on the store. */

/** One rate-limit window a send counts against: at most `limit` admissions per `windowMs`. */
export interface RateBucket {
  /** Identifies the counter (client, channel, window); shared by every process on the store. */
  key: string;
  limit: number;
  windowMs: number;
}

export type RateDecision =
  | { admitted: true }
  /** Per bucket, in order: ms until it has room again, or null when it has room now. */
  | { admitted: false; waitMs: (number | null)[] };

/** One cap counter a send counts against: `amount` more, refused past `limit`, the period ending at `resets_at`. */
export interface CapCharge {
  key: string;
  limit: number;
  amount: number;
  resets_at: number;
}

export type CapDecision = { admitted: true } | { admitted: false; key: string; used: number; resets_at: number };

export interface CapCounter {
  key: string;
  used: number;
  resets_at: number;
}

export interface CountersPort {
  /**
   * Admits one event into every bucket, or into none: each bucket is a sliding window over
   * the admissions it let through (the last `windowMs` before `now`), full at `limit`. A
   * refusal writes nothing. Atomic across processes sharing the store.
   */
  admitRate(buckets: readonly RateBucket[], now: number): Promise<RateDecision>;
  /**
   * Adds every charge to its counter, or none: a counter whose period ended starts again at
   * zero; one that would pass its limit refuses the whole send (the first such is named).
   * Atomic across processes sharing the store.
   */
  chargeCaps(charges: readonly CapCharge[], now: number): Promise<CapDecision>;
  /** Counters whose period has not ended at `now`. */
  listCapCounters(now: number): Promise<CapCounter[]>;
}
