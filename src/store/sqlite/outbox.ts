/** SQLite's claim of due sends and its batched end of dry-run releases (the outbox port), each one immediate transaction. */
import { released, type AuditedChange } from '../audit.js';
import type { RecordWrite } from '../ports/deliveries.js';
import type { DueClaim, DueClaimOptions, OutboxPort, ReleaseRecord } from '../ports/outbox.js';
import { outboxFromRow, rootAnswered, rootNotYet } from '../sql/outbox.js';
import { deliveryValues, WRITTEN, type Row } from '../sql/rows.js';
import * as q from '../sql/statements.js';
import type { SqliteEngine } from './engine.js';

/** Whether a row is an escalation step whose first send was answered. */
const ANSWERED = `${rootAnswered('outbox')} AS root_answered`;
/** A step whose first send awaits approval or is in flight waits: not read for a claim (`?`: the lease's start). */
const NOT_YET = rootNotYet('outbox', '?');

/** The claim of due sends and the end of dry-run releases, over engine `e`. */
export function sqliteOutbox(e: SqliteEngine): Pick<OutboxPort, 'claimDue' | 'recordReleases'> {
  return {
    claimDue: (...a) => claimDue(e, ...a),
    recordReleases: (...a) => recordReleases(e, ...a),
  };
}

async function claimDue(e: SqliteEngine, now: number, { limit, owner, leaseMs, graceMs, id }: DueClaimOptions): Promise<DueClaim> {
  // IMMEDIATE: the write lock is held from the read to the updates, so each due entry goes
  // to one process of those sharing the file.
  const tx = e.db.transaction((): DueClaim => {
    const where = `((state IN ('scheduled', 'held') AND due_at <= ? AND NOT ${NOT_YET}) OR (state = 'releasing' AND claimed_at <= ?))`;
    const rows = (
      id === undefined
        ? soonestDue(e, now, now - leaseMs, limit)
        : e.statement(`SELECT *, ${ANSWERED} FROM outbox WHERE ${where} AND id = ?`).all(now, now - leaseMs, now - leaseMs, id)
    ) as Row[];
    const claim = e.statement(`UPDATE outbox SET state = ?, owner = ?, claimed_at = ?, finished_at = ? WHERE id = ?`);
    const out: DueClaim = { due: [], expired: [] };
    const moves: AuditedChange[] = [];
    for (const row of rows) {
      const entry = outboxFromRow(row);
      // An escalation step whose first send was answered is cancelled, read in this transaction:
      // an answer's write (and its cancel of the steps) commits wholly before or after it.
      if (entry.state !== 'releasing' && Number(row.root_answered) === 1) {
        claim.run('cancelled', null, entry.claimed_at, now, entry.id);
        (out.cancelled ??= []).push({ ...entry, state: 'cancelled', finished_at: now });
        moves.push({
          write: 'outbox',
          id: entry.id,
          client: entry.client,
          state: 'cancelled',
          at: now,
          detail: { escalates: entry.escalates, why: 'answered' },
        });
        continue;
      }
      // A release already under way keeps going (its idempotency claim decides); a send never started is too late past the grace.
      // A step may have waited up to a lease for its first send (rootNotYet): its grace also runs from a lease after it was kept.
      const late =
        entry.state !== 'releasing' &&
        entry.due_at < now - graceMs &&
        (entry.escalates === undefined || entry.created_at < now - leaseMs - graceMs);
      if (late) {
        claim.run('expired', null, entry.claimed_at, now, entry.id);
        out.expired.push({ ...entry, state: 'expired', finished_at: now });
        moves.push({
          write: 'outbox',
          id: entry.id,
          client: entry.client,
          state: 'expired',
          at: now,
          detail: { due_at: entry.due_at, grace_ms: graceMs },
        });
      } else {
        claim.run('releasing', owner, now, null, entry.id);
        out.due.push({ ...entry, state: 'releasing', owner, claimed_at: now });
        moves.push({
          write: 'outbox',
          id: entry.id,
          client: entry.client,
          state: 'releasing',
          at: now,
          detail: { owner, from: entry.state, due_at: entry.due_at },
        });
      }
    }
    e.appendAudit(moves);
    return out;
  });
  return tx.immediate();
}

/**
 * The `limit` soonest due entries (waiting, or releasing past their lease), one index walk
 * per state, so a batch reads only the rows it may claim, not every due row sorted.
 */
function soonestDue(e: SqliteEngine, now: number, leaseEnded: number, limit: number): Row[] {
  const walk = e.statement(`SELECT *, ${ANSWERED} FROM outbox WHERE state = ? AND due_at <= ? AND NOT ${NOT_YET} ORDER BY due_at LIMIT ?`);
  const stale = e.statement(`SELECT *, ${ANSWERED} FROM outbox WHERE state = 'releasing' AND claimed_at <= ? ORDER BY due_at LIMIT ?`);
  const rows = [
    ...(walk.all('scheduled', now, leaseEnded, limit) as Row[]),
    ...(walk.all('held', now, leaseEnded, limit) as Row[]),
    ...(stale.all(leaseEnded, limit) as Row[]),
  ];
  return rows.sort((a, b) => Number(a.due_at) - Number(b.due_at)).slice(0, limit);
}

async function recordReleases(e: SqliteEngine, owner: string, items: readonly ReleaseRecord[], now: number): Promise<RecordWrite[]> {
  // One transaction for a batch: the commit, not the release, is the dear part.
  const tx = e.db.transaction((): RecordWrite[] => {
    const finish = e.shared(e.ob.finish);
    const insert = e.shared(q.INSERT_DELIVERY);
    const audit: AuditedChange[] = [];
    const out = items.map((it): RecordWrite => {
      const optedOut = it.optOut && e.firstOptedOut(it.optOut);
      if (optedOut !== undefined) return { kind: 'opted_out', recipient: optedOut };
      if (finish.run(['released', JSON.stringify(it.outcome ?? null), now, it.id, owner]).changes !== 1) return { kind: 'claim_lost' };
      insert.run(deliveryValues(it.record));
      audit.push({ write: 'record', record: it.record, ctx: it.audit }, released(it, owner, now));
      return WRITTEN;
    });
    e.appendAudit(audit);
    return out;
  });
  return tx.immediate();
}
