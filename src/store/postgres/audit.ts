/** PostgreSQL's audit chain: the head locked by row until COMMIT, appends in one statement, verify's lines, pruning (the audit port). */
import type pg from 'pg';
import { auditEntriesFor, chain, type AuditedChange } from '../audit.js';
import type { AuditLines, AuditPort } from '../ports/audit.js';
import {
  appendAuditText,
  AUDIT_COLUMNS,
  AUDIT_HASH_AT,
  AUDIT_LINES_POSTGRES,
  auditHeadFromRow,
  auditLinesFromRow,
  AUDIT_PRUNE,
  AUDIT_PRUNE_UPTO,
  auditValues,
  MOVE_AUDIT_ANCHOR,
} from '../sql/audit.js';
import { num, type Row } from '../sql/rows.js';
import { prepared, type PgEngine } from './engine.js';

/**
 * The chain's head, locked until COMMIT: appenders on every replica queue on this one row, so
 * each reads the head the previous one wrote and the chain never forks. A row lock rather than
 * an advisory lock because the lock and the state it guards are the same row (no separate
 * read of the tail, nothing to get out of step), it is released by COMMIT or ROLLBACK like
 * the write it guards, and it works through a transaction-pooling proxy.
 */
const LOCK_AUDIT_HEAD = prepared('audit-lock-head', 'SELECT seq, hash, anchor_seq, anchor_hash FROM audit_head WHERE id = 1 FOR UPDATE');

/** `n` entries appended and the head moved, in one statement. */
const appendStatements = new Map<number, { name: string; text: string }>();

function appendAuditStatement(n: number): { name: string; text: string } {
  let s = appendStatements.get(n);
  if (!s) {
    const w = AUDIT_COLUMNS.length;
    s = prepared(
      `audit-append-${n}`,
      `WITH added AS (${appendAuditText(n)}) UPDATE audit_head SET seq = $${n * w + 1}, hash = $${n * w + 2} WHERE id = 1`,
    );
    appendStatements.set(n, s);
  }
  return s;
}
/**
 * Appends audit entries to the chain, inside the transaction (on `client`) of the write
 * they describe. Call it after that write's own statements: the head stays locked from
 * here to COMMIT, so the later it is taken the less replicas queue on it.
 */
export async function appendAudit(client: pg.PoolClient, changes: readonly AuditedChange[]): Promise<void> {
  if (changes.length === 0) return;
  const inputs = changes.flatMap(auditEntriesFor);
  const { rows } = await client.query({ ...LOCK_AUDIT_HEAD, values: [] });
  const { entries, head } = chain(auditHeadFromRow(rows[0] as Row), inputs);
  await client.query({ ...appendAuditStatement(entries.length), values: [...entries.flatMap(auditValues), head.seq, head.hash] });
}

/** Verify's lines and pruning, over engine `e`. */
export function postgresAudit(e: PgEngine): Pick<AuditPort, 'auditLines' | 'pruneAudit'> {
  return {
    auditLines: (...a) => auditLines(e, ...a),
    pruneAudit: (...a) => pruneAudit(e, ...a),
  };
}

async function auditLines(e: PgEngine, afterSeq: number, limit: number): Promise<AuditLines> {
  const { rows } = await e.pool.query({ ...AUDIT_LINES_POSTGRES, values: [afterSeq, limit] });
  return auditLinesFromRow(rows[0] as Row | undefined);
}

async function pruneAudit(e: PgEngine, before: number, now: number): Promise<number> {
  return e.transaction(async (client) => {
    // The head's lock: no append or other prune moves the chain meanwhile.
    const { rows } = await client.query({ ...LOCK_AUDIT_HEAD, values: [] });
    const head = auditHeadFromRow(rows[0] as Row);
    const upto = (await client.query({ ...AUDIT_PRUNE_UPTO, values: [before] })).rows[0]?.upto;
    if (upto === null || upto === undefined || num(upto) <= head.anchor_seq) return 0;
    const anchor = (await client.query({ ...AUDIT_HASH_AT, values: [upto] })).rows[0].hash as string;
    const { rowCount } = await client.query({ ...AUDIT_PRUNE, values: [upto] });
    await client.query({ ...MOVE_AUDIT_ANCHOR, values: [upto, anchor] });
    await e.appendAudit(client, [{ write: 'prune', anchor_seq: num(upto), anchor_hash: anchor, at: now }]);
    return rowCount ?? 0;
  });
}
