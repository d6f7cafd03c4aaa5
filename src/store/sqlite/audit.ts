/** SQLite's reads of the audit chain (rows as arrays), verify's lines, and pruning (the audit port). */
import type Database from 'better-sqlite3';
import type { AuditEntry, AuditLines, AuditPort, AuditQuery } from '../ports/audit.js';
import {
  AUDIT_FILTERED,
  AUDIT_HASH_AT,
  AUDIT_HEAD,
  AUDIT_LINES_SQLITE,
  AUDIT_PAGE,
  AUDIT_PRUNE,
  AUDIT_PRUNE_UPTO,
  auditFromArray,
  auditHeadFromRow,
  auditLinesFromRow,
  MOVE_AUDIT_ANCHOR,
} from '../sql/audit.js';
import type { SqliteEngine } from './engine.js';

/** The chain's reads and pruning, over engine `e`. */
export function sqliteAudit(e: SqliteEngine): Pick<AuditPort, 'auditEntries' | 'auditLines' | 'pruneAudit'> {
  /** The audit's page reads, raw (rows as arrays). */
  const auditReads = new Map<string, Database.Statement>();
  return {
    auditEntries: (...a) => auditEntries(e, auditReads, ...a),
    auditLines: (...a) => auditLines(e, ...a),
    pruneAudit: (...a) => pruneAudit(e, ...a),
  };
}

/** Rows as arrays, mapped once: verify reads every entry of the chain, and named rows are the dearer read. */
async function auditEntries(e: SqliteEngine, auditReads: Map<string, Database.Statement>, query: AuditQuery): Promise<AuditEntry[]> {
  const filtered = query.since !== undefined || query.client !== undefined || query.notificationId !== undefined;
  const key = filtered ? AUDIT_FILTERED.text : AUDIT_PAGE.text;
  let stmt = auditReads.get(key);
  if (!stmt) auditReads.set(key, (stmt = e.db.prepare(key.replace(/\$(\d+)/g, '@p$1')).raw()));
  const params = filtered
    ? { p1: query.afterSeq, p2: query.limit, p3: query.since ?? null, p4: query.client ?? null, p5: query.notificationId ?? null }
    : { p1: query.afterSeq, p2: query.limit };
  return (stmt.all(params) as unknown[][]).map(auditFromArray);
}

async function auditLines(e: SqliteEngine, afterSeq: number, limit: number): Promise<AuditLines> {
  return auditLinesFromRow(e.shared(AUDIT_LINES_SQLITE).get([afterSeq, limit]));
}

async function pruneAudit(e: SqliteEngine, before: number, now: number): Promise<number> {
  const tx = e.db.transaction((): number => {
    const head = auditHeadFromRow(e.shared(AUDIT_HEAD).get([])!);
    const upto = e.shared(AUDIT_PRUNE_UPTO).get([before])?.upto;
    if (upto === null || upto === undefined || Number(upto) <= head.anchor_seq) return 0;
    const anchor = e.shared(AUDIT_HASH_AT).get([upto])!.hash as string;
    const n = e.shared(AUDIT_PRUNE).run([upto]).changes;
    e.shared(MOVE_AUDIT_ANCHOR).run([upto, anchor]);
    e.appendAudit([{ write: 'prune', anchor_seq: Number(upto), anchor_hash: anchor, at: now }]);
    return n;
  });
  return tx.immediate();
}
