/**
 * PostgreSQL's idempotency claims and approval answers (the claims port): each a single
 * INSERT … ON CONFLICT … WHERE, which re-checks its condition on the locked, latest row.
 */
import { randomUUID } from 'node:crypto';
import { StoreError } from '../errors.js';
import type { ApprovalAnswer, ClaimsPort, IdempotencyClaim, IdempotencyPhase } from '../ports/claims.js';
import type { OptOutCheck } from '../ports/contacts.js';
import { num, type Row } from '../sql/rows.js';
import * as q from '../sql/statements.js';
import { prepared, type PgEngine } from './engine.js';

const KEY_PURGE_INTERVAL_MS = 60_000;

/**
 * A select-list item that makes its statement's own (implicit) transaction commit without
 * waiting for the WAL flush: `set_config(…, true)` lasts until that commit only, so the
 * connection goes back to the pool flushing its commits. Used by the idempotency claim alone,
 * whose loss in a database crash breaks neither promise:
 * - one key, one send: a claim is visible to other sessions at once, as with a flushed
 *   commit. A crash that loses it also ends every session; its owner is then fenced out
 *   (the `sending` write and the dry run's record each name the owner and find no row, so
 *   it neither sends nor records) and a duplicate claims afresh;
 * - nothing acknowledged is lost: no answer rests on the claim alone. Those writes that do
 *   (`sending`, before any provider call; the record completing a dry run; the stored
 *   result) commit flushed, and a flushed commit flushes all WAL before it, the claim
 *   included: a write that found the claim committed after it.
 */
const ASYNC_COMMIT = `set_config('synchronous_commit', 'off', true) AS async_commit`;

/**
 * Claims key $1 for payload $2 at $3 as owner $6 (ttl $4, stale after $5) for notification
 * $9, unless channel $7 has opted out one of recipients $8. The WHERE of ON CONFLICT DO UPDATE is evaluated on the
 * locked latest row version, so of several racing claimers exactly one gets a row back. A
 * taken-over claim keeps its phase (an expired one starts afresh): once a provider call may
 * have started, no taker sends, and the row keeps the id that call was sending under.
 */
const CLAIM = prepared(
  'claim',
  `WITH o AS (SELECT recipient FROM opt_outs WHERE via = $7 AND recipient = ANY($8::text[]) LIMIT 1),
   c AS (
     INSERT INTO idempotency_keys AS k (key, payload_hash, state, result, claimed_at, owner, phase, notification_id)
     SELECT $1, $2, 'pending', NULL, $3, $6, 'claimed', $9::text WHERE NOT EXISTS (SELECT 1 FROM o)
     ON CONFLICT (key) DO UPDATE SET payload_hash = EXCLUDED.payload_hash, state = 'pending', result = NULL,
       claimed_at = EXCLUDED.claimed_at, owner = EXCLUDED.owner,
       phase = CASE WHEN $3 - k.claimed_at >= $4 THEN 'claimed' ELSE k.phase END,
       notification_id = CASE WHEN $3 - k.claimed_at >= $4 OR k.phase = 'claimed' THEN EXCLUDED.notification_id ELSE k.notification_id END
     WHERE $3 - k.claimed_at >= $4
        OR (k.state = 'pending' AND k.payload_hash = EXCLUDED.payload_hash AND $3 - k.claimed_at >= $5)
     RETURNING phase, notification_id)
   SELECT (SELECT phase FROM c) AS phase, (SELECT notification_id FROM c) AS notification_id, (SELECT recipient FROM o) AS opted_out, ${ASYNC_COMMIT}`,
);

/**
 * Answer $2 to approval question key $1 at $3, unless an answer younger than the ttl ($4) is
 * there: the WHERE is evaluated on the locked latest row, so of racing answers one writes.
 * Kept with the idempotency keys (and purged with them), under a key no scoped send key can
 * take (those are JSON arrays).
 */
const ANSWER_APPROVAL = prepared(
  'answer-approval',
  `INSERT INTO idempotency_keys AS k (key, payload_hash, state, result, claimed_at, owner, phase) VALUES ($1, $2, 'done', NULL, $3, NULL, 'sending')
   ON CONFLICT (key) DO UPDATE SET payload_hash = EXCLUDED.payload_hash, claimed_at = EXCLUDED.claimed_at WHERE $3 - k.claimed_at >= $4
   RETURNING 1`,
);

/** The claim and the approval answer, over engine `e`. */
export function postgresClaims(e: PgEngine): Pick<ClaimsPort, 'claimIdempotency' | 'answerApproval'> {
  const keyPurge = { last: 0 };
  return {
    claimIdempotency: (...a) => claimIdempotency(e, keyPurge, ...a),
    answerApproval: (...a) => answerApproval(e, ...a),
  };
}

async function claimIdempotency(
  e: PgEngine,
  keyPurge: { last: number },
  key: string,
  payloadHash: string,
  now: number,
  opts: { ttlMs: number; staleAfterMs: number; optOut?: OptOutCheck; notificationId?: string },
): Promise<IdempotencyClaim> {
  if (now - keyPurge.last >= KEY_PURGE_INTERVAL_MS) {
    keyPurge.last = now;
    await e.pool.query('DELETE FROM idempotency_keys WHERE claimed_at <= $1', [now - opts.ttlMs]);
  }
  const owner = randomUUID();
  // A row that vanishes between the upsert and the read was released: claim again.
  for (let attempt = 0; attempt < 5; attempt++) {
    // The opt-out lookup rides along: an opted-out recipient claims nothing. One statement,
    // one round trip, committed without waiting for its WAL flush (see ASYNC_COMMIT).
    const { via = null, recipients = [] } = opts.optOut ?? {};
    const claimed = await e.pool.query({
      ...CLAIM,
      values: [key, payloadHash, now, opts.ttlMs, opts.staleAfterMs, owner, via, recipients, opts.notificationId ?? null],
    });
    const won = claimed.rows[0] as Row;
    if (typeof won.opted_out === 'string') return { kind: 'opted_out', recipient: won.opted_out };
    if (won.phase !== null) {
      const phase = won.phase as IdempotencyPhase;
      return typeof won.notification_id === 'string'
        ? { kind: 'claimed', owner, phase, notification_id: won.notification_id }
        : { kind: 'claimed', owner, phase };
    }
    const { rows } = await e.pool.query({ ...q.CLAIM_READ, values: [key] });
    const row = rows[0] as Row | undefined;
    if (!row) continue;
    const base = { kind: 'existing' as const, payload_hash: row.payload_hash as string, claimed_at: num(row.claimed_at) };
    return row.state === 'pending'
      ? { ...base, state: 'pending', phase: row.phase as IdempotencyPhase }
      : { ...base, state: 'done', result: row.result ?? null };
  }
  throw new StoreError(`idempotency key "${key}" kept changing while being claimed`);
}

async function answerApproval(
  e: PgEngine,
  id: string,
  answer: ApprovalAnswer,
  now: number,
  ttlMs: number,
): Promise<{ answer: ApprovalAnswer; first: boolean }> {
  const key = `approval-answer:${id}`;
  // A row that vanishes between the upsert and the read was purged: answer again.
  for (let attempt = 0; attempt < 5; attempt++) {
    const first = await e.transaction(async (client) => {
      const { rowCount } = await client.query({ ...ANSWER_APPROVAL, values: [key, answer, now, ttlMs] });
      if (rowCount === 1) await e.appendAudit(client, [{ write: 'answer', question: id, answer, at: now }]);
      return rowCount === 1;
    });
    if (first) return { answer, first: true };
    const { rows } = await e.pool.query({ ...q.CLAIM_READ, values: [key] });
    const row = rows[0] as Row | undefined;
    if (row) return { answer: row.payload_hash as ApprovalAnswer, first: false };
  }
  throw new StoreError(`approval answer "${id}" kept changing while being recorded`);
}
