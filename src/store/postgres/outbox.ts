/** PostgreSQL's claim of due sends (`FOR UPDATE SKIP LOCKED`) and its batched end of dry-run releases (the outbox port). */
import { released, type AuditedChange } from '../audit.js';
import type { DueClaim, DueClaimOptions, OutboxPort, ReleaseRecord } from '../ports/outbox.js';
import type { RecordWrite } from '../ports/deliveries.js';
import { outboxFromRow, rootAnswered, rootNotYet } from '../sql/outbox.js';
import { DELIVERY_COLUMNS, deliveryValues, num, WRITTEN, type Row } from '../sql/rows.js';
import { prepared, type PgEngine } from './engine.js';

const N = DELIVERY_COLUMNS.length;

/**
 * An escalation step whose first send's question is answered, read in this statement:
 * `cancelled` instead of claimed. An answer's transaction cancels the steps still waiting,
 * and a step it holds locked is skipped here, so each step goes to exactly one of the two.
 */
const ANSWERED = `${rootAnswered('outbox')} AS answered`;
/** A step whose first send awaits approval or is in flight waits: not picked ($2: the lease's start). */
const NOT_YET = rootNotYet('outbox', '$2');
const walk = (state: string, cond: string) =>
  `(SELECT id, state AS prior, due_at, ${ANSWERED} FROM outbox WHERE state = '${state}' AND ${cond} ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED)`;
/**
 * Not claimed: cancelled (answered) or expired (too late), both only for an entry no release
 * had started. A step may have waited up to a lease for its first send (rootNotYet): its grace
 * also runs from a lease after it was kept.
 */
const ENDS = `picked.prior <> 'releasing' AND (picked.answered OR (o.due_at < $1 - $5 AND (o.escalates IS NULL OR o.created_at < $2 - $5)))`;
/**
 * Claims what is due at $1 (a release claimed before $2 was left by a dead process) for owner
 * $4, at most $3 (CLAIM_DUE_ID: only entry $3); due longer than $5 ago (never claimed) expires
 * instead. SKIP LOCKED lets replicas claim disjoint batches at once, each row to one of them;
 * `prior` is the state before the claim, read under the same lock. Without an id, one index
 * walk per state, so a batch reads only the rows it may claim, not every due row sorted.
 */
const claimDueStatement = (name: string, pick: string) =>
  prepared(
    name,
    `WITH ${pick}
     UPDATE outbox o SET
       state = CASE WHEN picked.prior <> 'releasing' AND picked.answered THEN 'cancelled' WHEN ${ENDS} THEN 'expired' ELSE 'releasing' END,
       owner = CASE WHEN ${ENDS} THEN NULL ELSE $4 END,
       claimed_at = CASE WHEN ${ENDS} THEN o.claimed_at ELSE $1 END,
       finished_at = CASE WHEN ${ENDS} THEN $1 ELSE NULL END
     FROM picked WHERE o.id = picked.id RETURNING o.*, picked.prior`,
  );
/** $1 now, $2 the lease's start, $3 the batch size, $4 the owner, $5 the grace. */
const CLAIM_DUE = claimDueStatement(
  'claim-due',
  `s AS ${walk('scheduled', `due_at <= $1 AND NOT ${NOT_YET}`)}, h AS ${walk('held', `due_at <= $1 AND NOT ${NOT_YET}`)}, r AS ${walk('releasing', 'claimed_at <= $2')},
   picked AS (SELECT * FROM s UNION ALL SELECT * FROM h UNION ALL SELECT * FROM r ORDER BY due_at LIMIT $3)`,
);

/** As CLAIM_DUE, for one id ($3). */
const CLAIM_DUE_ID = claimDueStatement(
  'claim-due-id',
  `picked AS (
     SELECT id, state AS prior, ${ANSWERED} FROM outbox
     WHERE ((state IN ('scheduled', 'held') AND due_at <= $1 AND NOT ${NOT_YET}) OR (state = 'releasing' AND claimed_at <= $2)) AND id = $3
     FOR UPDATE SKIP LOCKED)`,
);

/** The claim of due sends and the end of dry-run releases, over engine `e`. */
export function postgresOutbox(e: PgEngine): Pick<OutboxPort, 'claimDue' | 'recordReleases'> {
  return {
    claimDue: (...a) => claimDue(e, ...a),
    recordReleases: (...a) => recordReleases(e, ...a),
  };
}

async function claimDue(e: PgEngine, now: number, { limit, owner, leaseMs, graceMs, id }: DueClaimOptions): Promise<DueClaim> {
  // One transaction with its audit entries: the claim's row locks and the chain's head are released by its COMMIT.
  const rows = await e.audited(
    id === undefined ? CLAIM_DUE : CLAIM_DUE_ID,
    [now, now - leaseMs, id ?? limit, owner, graceMs],
    // RETURNING keeps no order: the chain names them oldest due first, as the claim took them.
    (claimed) =>
      [...claimed]
        .sort((x, y) => num(x.due_at) - num(y.due_at) || String(x.id).localeCompare(String(y.id)))
        .map((row): AuditedChange => {
          const e = outboxFromRow(row);
          if (e.state === 'cancelled')
            return {
              write: 'outbox',
              id: e.id,
              client: e.client,
              state: 'cancelled',
              at: now,
              detail: { escalates: e.escalates, why: 'answered' },
            };
          return e.state === 'expired'
            ? {
                write: 'outbox',
                id: e.id,
                client: e.client,
                state: 'expired',
                at: now,
                detail: { due_at: e.due_at, grace_ms: graceMs },
              }
            : {
                write: 'outbox',
                id: e.id,
                client: e.client,
                state: 'releasing',
                at: now,
                detail: { owner, from: row.prior, due_at: e.due_at },
              };
        }),
  );
  const out: DueClaim = { due: [], expired: [] };
  for (const row of rows) {
    const entry = outboxFromRow(row);
    if (entry.state === 'cancelled') (out.cancelled ??= []).push(entry);
    else (entry.state === 'expired' ? out.expired : out.due).push(entry);
  }
  out.due.sort((a, b) => a.due_at - b.due_at);
  return out;
}

async function recordReleases(e: PgEngine, owner: string, items: readonly ReleaseRecord[], now: number): Promise<RecordWrite[]> {
  if (items.length === 0) return [];
  // A batch set-based, in one transaction and one hold of the audit head: a transaction per
  // release would queue every replica's releases behind the head's lock.
  return e.transaction(async (client) => {
    const checks = items.flatMap((it) => (it.optOut ? [it.optOut] : []));
    const opted = new Set<string>();
    if (checks.length > 0) {
      const { rows } = await client.query(
        'SELECT via, recipient FROM opt_outs WHERE via = ANY($1::text[]) AND recipient = ANY($2::text[])',
        [[...new Set(checks.map((c) => c.via))], [...new Set(checks.flatMap((c) => c.recipients))]],
      );
      for (const r of rows as Row[]) opted.add(`${r.via as string}\n${r.recipient as string}`);
    }
    const out: RecordWrite[] = items.map((it) => {
      const recipient = it.optOut?.recipients.find((r) => opted.has(`${it.optOut!.via}\n${r}`));
      return recipient === undefined ? WRITTEN : { kind: 'opted_out', recipient };
    });
    const candidates = items.filter((_, i) => out[i] === WRITTEN);
    const { rows: won } = await client.query(
      `UPDATE outbox o SET state = 'released', outcome = u.outcome, finished_at = $3
       FROM unnest($1::text[], $2::text[]) AS u(id, outcome)
       WHERE o.id = u.id AND o.owner = $4 AND o.state = 'releasing' RETURNING o.id`,
      [candidates.map((it) => it.id), candidates.map((it) => JSON.stringify(it.outcome ?? null)), now, owner],
    );
    const ours = new Set((won as Row[]).map((r) => r.id as string));
    items.forEach((it, i) => {
      if (out[i] === WRITTEN && !ours.has(it.id)) out[i] = { kind: 'claim_lost' };
    });
    const written = items.filter((_, i) => out[i] === WRITTEN);
    if (written.length > 0) {
      const rowsText = written.map((_, r) => `(${DELIVERY_COLUMNS.map((_, c) => `$${r * N + c + 1}`).join(', ')})`).join(', ');
      await client.query(
        `INSERT INTO deliveries (${DELIVERY_COLUMNS.join(', ')}) VALUES ${rowsText}`,
        written.flatMap((it) => deliveryValues(it.record)),
      );
      await e.appendAudit(
        client,
        written.flatMap((it): AuditedChange[] => [{ write: 'record', record: it.record, ctx: it.audit }, released(it, owner, now)]),
      );
    }
    return out;
  });
}
