/** PostgreSQL's send caps (row locks in key order) and rate windows (advisory locks per bucket): the counters port. */
import type { CapCharge, CapDecision, CountersPort, RateBucket, RateDecision } from '../ports/counters.js';
import { num, type Row } from '../sql/rows.js';
import { withClient } from './connection.js';
import type { PgEngine } from './engine.js';

/** Expired rate-limit admissions of idle buckets are deleted at most this often. */
const RATE_PURGE_INTERVAL_MS = 60_000;

/** Caps and rate admission, over engine `e`. */
export function postgresCounters(e: PgEngine): Pick<CountersPort, 'chargeCaps' | 'admitRate'> {
  const ratePurge = { last: 0 };
  return {
    chargeCaps: (...a) => chargeCaps(e, ...a),
    admitRate: (...a) => admitRate(e, ratePurge, ...a),
  };
}

async function chargeCaps(e: PgEngine, charges: readonly CapCharge[], now: number): Promise<CapDecision> {
  if (charges.length === 0) return { admitted: true };
  return withClient(e.pool, e.log, async (client) => {
    try {
      await client.query('BEGIN');
      // Row locks in one key order, so two sends sharing counters cannot deadlock.
      const sorted = [...charges].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      for (const c of sorted) {
        await client.query('INSERT INTO cap_counters (key, used, resets_at) VALUES ($1, 0, $2) ON CONFLICT (key) DO NOTHING', [
          c.key,
          c.resets_at,
        ]);
      }
      const { rows } = await client.query(
        'SELECT key, used, resets_at FROM cap_counters WHERE key = ANY($1::text[]) ORDER BY key FOR UPDATE',
        [sorted.map((c) => c.key)],
      );
      const used = new Map((rows as Row[]).map((r) => [r.key as string, num(r.resets_at) <= now ? 0 : num(r.used)]));
      const over = charges.find((c) => (used.get(c.key) ?? 0) + c.amount > c.limit);
      if (over) {
        await client.query('ROLLBACK');
        return { admitted: false, key: over.key, used: used.get(over.key) ?? 0, resets_at: over.resets_at };
      }
      for (const c of sorted) {
        await client.query('UPDATE cap_counters SET used = $2, resets_at = $3 WHERE key = $1', [
          c.key,
          (used.get(c.key) ?? 0) + c.amount,
          c.resets_at,
        ]);
      }
      await client.query('COMMIT');
      return { admitted: true };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}

async function admitRate(e: PgEngine, ratePurge: { last: number }, buckets: readonly RateBucket[], now: number): Promise<RateDecision> {
  if (now - ratePurge.last >= RATE_PURGE_INTERVAL_MS) {
    // Buckets of clients that stopped calling; active buckets are trimmed below.
    ratePurge.last = now;
    await e.pool.query('DELETE FROM rate_admissions WHERE expires_at <= $1', [now]);
  }
  const keys = buckets.map((b) => b.key);
  return withClient(e.pool, e.log, async (client) => {
    try {
      await client.query('BEGIN');
      // Count-then-insert is serialised per bucket across replicas; released at COMMIT.
      // Locks are taken in one order, so two checks sharing buckets cannot deadlock.
      for (const key of [...new Set(keys)].sort()) {
        await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('notify-mcp:rate:' || $1, 0))`, [key]);
      }
      // Per bucket, the limit-th newest admission still in the window: present means full, until it expires.
      const { rows } = await client.query(
        `SELECT (SELECT a.expires_at FROM rate_admissions a WHERE a.bucket = b.key AND a.expires_at > $3
                 ORDER BY a.expires_at DESC LIMIT 1 OFFSET GREATEST(b.lim - 1, 0)) AS full_until
         FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS b(key, lim, i) ORDER BY b.i`,
        [keys, buckets.map((b) => b.limit), now],
      );
      const waitMs = buckets.map((b, i) => {
        if (b.limit <= 0) return b.windowMs;
        const fullUntil = (rows[i] as Row | undefined)?.full_until;
        return fullUntil === null || fullUntil === undefined ? null : num(fullUntil) - now;
      });
      if (waitMs.some((w) => w !== null)) {
        await client.query('COMMIT');
        return { admitted: false, waitMs };
      }
      await client.query('DELETE FROM rate_admissions WHERE bucket = ANY($1::text[]) AND expires_at <= $2', [keys, now]);
      await client.query(
        'INSERT INTO rate_admissions (bucket, expires_at) SELECT key, $2::bigint + window_ms FROM unnest($1::text[], $3::bigint[]) AS b(key, window_ms)',
        [keys, now, buckets.map((b) => b.windowMs)],
      );
      await client.query('COMMIT');
      return { admitted: true };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    }
  });
}
