/**
 * The audit log's statements and row mapping, the same on both engines. Appending is each
 * engine's own (`appendAudit` in its store.ts): it runs inside the transaction of the write
 * it describes, with the head row locked (PostgreSQL) or the write lock held (SQLite).
 */
import type { AuditEntry, AuditHead, AuditLines } from '../types.js';
import { statement } from './dialect.js';
import { num, type Row } from './rows.js';

export const AUDIT_COLUMNS = ['seq', 'at', 'client', 'tool', 'notification_id', 'kind', 'digest', 'recipients', 'prev', 'hash'] as const;

export const auditValues = (e: AuditEntry): unknown[] => [
  e.seq,
  e.at,
  e.client,
  e.tool,
  e.notification_id,
  e.kind,
  e.digest,
  e.recipients === null ? null : JSON.stringify(e.recipients),
  e.prev,
  e.hash,
];

export function auditFromRow(r: Row): AuditEntry {
  return {
    seq: num(r.seq),
    at: num(r.at),
    client: (r.client as string | null) ?? null,
    tool: (r.tool as string | null) ?? null,
    notification_id: (r.notification_id as string | null) ?? null,
    kind: r.kind as string,
    digest: r.digest as string,
    recipients: r.recipients === null || r.recipients === undefined ? null : (JSON.parse(r.recipients as string) as string[]),
    prev: r.prev as string,
    hash: r.hash as string,
  };
}

/** A row read as an array, in AUDIT_COLUMNS order. */
export function auditFromArray(r: unknown[]): AuditEntry {
  return {
    seq: num(r[0]),
    at: num(r[1]),
    client: (r[2] as string | null) ?? null,
    tool: (r[3] as string | null) ?? null,
    notification_id: (r[4] as string | null) ?? null,
    kind: r[5] as string,
    digest: r[6] as string,
    recipients: r[7] === null || r[7] === undefined ? null : (JSON.parse(r[7] as string) as string[]),
    prev: r[8] as string,
    hash: r[9] as string,
  };
}

export function auditHeadFromRow(r: Row): AuditHead {
  return { seq: num(r.seq), hash: r.hash as string, anchor_seq: num(r.anchor_seq), anchor_hash: r.anchor_hash as string };
}

/** `n` entries in one INSERT ($1…$10n). */
export function appendAuditText(n: number): string {
  const w = AUDIT_COLUMNS.length;
  const rows = Array.from({ length: n }, (_, i) => `(${AUDIT_COLUMNS.map((_, j) => `$${i * w + j + 1}`).join(', ')})`);
  return `INSERT INTO audit_log (${AUDIT_COLUMNS.join(', ')}) VALUES ${rows.join(', ')}`;
}

export const INSERT_AUDIT = statement('audit-insert', appendAuditText(1));
/**
 * A page of the chain as verify reads it: one text of lines `<hashed JSON> <hash>` in seq
 * order, the JSON being what entryHash hashes, built by the engine (one string a page, not
 * a value per column and row: making JS values is most of what reading the chain costs). What
 * does not hash or link as it should is read again entry by entry (../audit.ts).
 */
export const AUDIT_LINES_SQLITE = statement(
  'audit-lines',
  // No ORDER BY in the aggregate (it would sort each page again): the rows come in the
  // subquery's seq order, and a line out of order is only a line verify reads again entry by entry.
  `SELECT group_concat(line, char(10)) AS text, max(seq) AS last, count(*) AS n FROM (
     SELECT seq, json_array(seq, at, client, tool, notification_id, kind, digest, json(recipients), prev) || ' ' || hash AS line
     FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2)`,
);
const pgJson = (c: string) => `COALESCE(to_json(${c})::text, 'null')`;
export const AUDIT_LINES_POSTGRES = statement(
  'audit-lines',
  `SELECT string_agg(line, E'\n' ORDER BY seq) AS text, max(seq) AS last, count(*) AS n FROM (
     SELECT seq, '[' || seq || ',' || at || ',' || ${['client', 'tool', 'notification_id', 'kind', 'digest'].map(pgJson).join(" || ',' || ")}
       || ',' || COALESCE(recipients, 'null') || ',' || ${pgJson('prev')} || '] ' || hash AS line
     FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2) page`,
);

export function auditLinesFromRow(r: Row | undefined): AuditLines {
  const n = r ? num(r.n) : 0;
  return { text: n === 0 ? '' : (r!.text as string), last: n === 0 ? null : num(r!.last), n };
}

export const AUDIT_HEAD = statement('audit-head', 'SELECT seq, hash, anchor_seq, anchor_hash FROM audit_head WHERE id = 1');
export const MOVE_AUDIT_HEAD = statement('audit-move-head', 'UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1');
export const AUDIT_PAGE = statement('audit-page', `SELECT ${AUDIT_COLUMNS.join(', ')} FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2`);
/** One notification's entries, by its index (the console's page of it): the filtered walk below would read the whole log. */
export const AUDIT_FOR = statement(
  'audit-for',
  `SELECT ${AUDIT_COLUMNS.join(', ')} FROM audit_log WHERE notification_id = $1 ORDER BY seq LIMIT $2`,
);
/** $3 (since), $4 (client) and $5 (notification id) may be null: no filter (cast, so PostgreSQL knows their types). */
export const AUDIT_FILTERED = statement(
  'audit-filtered',
  `SELECT ${AUDIT_COLUMNS.join(', ')} FROM audit_log WHERE seq > $1 AND (CAST($3 AS BIGINT) IS NULL OR at >= $3) AND (CAST($4 AS TEXT) IS NULL OR client = $4) AND (CAST($5 AS TEXT) IS NULL OR notification_id = $5) ORDER BY seq LIMIT $2`,
);
/** The last seq of the prefix older than $1 (entries are pruned as a prefix, so the rest still chains). */
export const AUDIT_PRUNE_UPTO = statement(
  'audit-prune-upto',
  'SELECT COALESCE((SELECT MIN(seq) FROM audit_log WHERE at >= $1) - 1, (SELECT MAX(seq) FROM audit_log)) AS upto',
);
export const AUDIT_HASH_AT = statement('audit-hash-at', 'SELECT hash FROM audit_log WHERE seq = $1');
export const AUDIT_PRUNE = statement('audit-prune', 'DELETE FROM audit_log WHERE seq <= $1');
export const MOVE_AUDIT_ANCHOR = statement('audit-move-anchor', 'UPDATE audit_head SET anchor_seq = $1, anchor_hash = $2 WHERE id = 1');
