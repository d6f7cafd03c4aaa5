/** SQLite's rate windows and send caps (the counters port): each one immediate transaction, all buckets or none. */
import type { CapCharge, CapDecision, CountersPort, RateBucket, RateDecision } from '../ports/counters.js';
import type { SqliteEngine } from './engine.js';

/** Expired rate-limit admissions of idle buckets are deleted at most this often. */
const RATE_PURGE_INTERVAL_MS = 60_000;

/** Rate admission and caps, over engine `e`. */
export function sqliteCounters(e: SqliteEngine): Pick<CountersPort, 'admitRate' | 'chargeCaps'> {
  const ratePurge = { last: 0 };
  return {
    admitRate: (...a) => admitRate(e, ratePurge, ...a),
    chargeCaps: (...a) => chargeCaps(e, ...a),
  };
}

async function admitRate(e: SqliteEngine, ratePurge: { last: number }, buckets: readonly RateBucket[], now: number): Promise<RateDecision> {
  // IMMEDIATE: the write lock is held from the count to the insert, so processes sharing
  // the file decide one after the other.
  const tx = e.db.transaction((): RateDecision => {
    if (now - ratePurge.last >= RATE_PURGE_INTERVAL_MS) {
      // Buckets of clients that stopped calling; active buckets are trimmed below.
      e.statement('DELETE FROM rate_admissions WHERE expires_at <= ?').run(now);
      ratePurge.last = now;
    }
    const waitMs = buckets.map((b) => {
      if (b.limit <= 0) return b.windowMs;
      // The limit-th newest admission still in the window: present means full, until it expires.
      const row = e
        .statement('SELECT expires_at FROM rate_admissions WHERE bucket = ? AND expires_at > ? ORDER BY expires_at DESC LIMIT 1 OFFSET ?')
        .get(b.key, now, b.limit - 1) as { expires_at: number } | undefined;
      return row === undefined ? null : row.expires_at - now;
    });
    if (waitMs.some((w) => w !== null)) return { admitted: false, waitMs };
    for (const b of buckets) {
      e.statement('DELETE FROM rate_admissions WHERE bucket = ? AND expires_at <= ?').run(b.key, now);
      e.statement('INSERT INTO rate_admissions (bucket, expires_at) VALUES (?, ?)').run(b.key, now + b.windowMs);
    }
    return { admitted: true };
  });
  return tx.immediate();
}

async function chargeCaps(e: SqliteEngine, charges: readonly CapCharge[], now: number): Promise<CapDecision> {
  // IMMEDIATE: every counter is read and written under one lock, all or none.
  const tx = e.db.transaction((): CapDecision => {
    const read = e.statement('SELECT used, resets_at FROM cap_counters WHERE key = ?');
    const used = charges.map((c) => {
      const row = read.get(c.key) as { used: number; resets_at: number } | undefined;
      return row === undefined || row.resets_at <= now ? 0 : row.used;
    });
    const over = charges.findIndex((c, i) => used[i]! + c.amount > c.limit);
    if (over >= 0) return { admitted: false, key: charges[over]!.key, used: used[over]!, resets_at: charges[over]!.resets_at };
    const write = e.statement(
      'INSERT INTO cap_counters (key, used, resets_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET used = excluded.used, resets_at = excluded.resets_at',
    );
    charges.forEach((c, i) => write.run(c.key, used[i]! + c.amount, c.resets_at));
    return { admitted: true };
  });
  return tx.immediate();
}
