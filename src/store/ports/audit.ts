/**
 * The audit port: the chain's entries (DESIGN section 10; the chain itself is ../audit.ts).
 * Every write the audit covers appends its entries in its own transaction; this port reads
 * the chain and prunes it.
 */

/** What a write tells the audit about itself; the store fills in seq, at, prev and hash. */
export interface AuditInput {
  at: number;
  client: string | null;
  tool: string | null;
  notification_id: string | null;
  /** `request`, `outcome.<status>`, `approval.<outcome>`, `receipt.<status>`, `answer.<accept|decline>`… */
  kind: string;
  /** SHA-256 (hex) of what the entry is about: the exact provider request, the outcome, the change. */
  digest: string;
  /** The recipients' classes (never the addresses); null when the entry has none. */
  recipients: readonly string[] | null;
}

export interface AuditEntry extends AuditInput {
  seq: number;
  /** The hash of the entry before (the anchor's for the first kept one). */
  prev: string;
  hash: string;
}

/**
 * Where the chain stands: its last entry, and the anchor it starts from (seq 0 and the
 * genesis hash until pruning moves it to the last pruned entry).
 */
export interface AuditHead {
  seq: number;
  hash: string;
  anchor_seq: number;
  anchor_hash: string;
}

/** Who made a change an audit entry records: the client (an operator's token client, too) and the tool it came through. */
export interface AuditActor {
  client: string | null;
  tool: string | null;
}

/** A page of the chain for verify's fast read: `n` lines `<hashed JSON> <hash>`, joined by newlines, the last seq `last`. */
export interface AuditLines {
  text: string;
  last: number | null;
  n: number;
}

/** What the send's caller adds to a record write's entries: which tool made it, and its recipients' classes. */
export interface AuditContext {
  tool: string | null;
  recipients?: readonly string[];
}

/** Which audit entries to read, in seq order: after `afterSeq`, at most `limit`, optionally from time `since`, of one client, of one notification. */
export interface AuditQuery {
  afterSeq: number;
  limit: number;
  since?: number;
  client?: string;
  notificationId?: string;
}

export interface AuditPort {
  /**
   * The audit chain: every write of the other ports that the audit covers (records,
   * receipts, approval answers and decisions, outbox moves, edits and retractions) appends
   * its entries in its own transaction (../audit.ts, `auditEntriesFor`, says which). Where
   * the chain stands, and its entries in seq order.
   */
  auditHead(): Promise<AuditHead>;
  auditEntries(query: AuditQuery): Promise<AuditEntry[]>;
  /** Verify's fast read: entries after `afterSeq`, at most `limit`, as lines (AuditLines). */
  auditLines(afterSeq: number, limit: number): Promise<AuditLines>;
  /** One notification's entries, oldest first (the console's notification page). */
  auditFor(notificationId: string, limit?: number): Promise<AuditEntry[]>;
  /**
   * Deletes entries older than `before` (a prefix of the chain), moving the anchor to the
   * last one deleted, so the rest still verifies, and appends a `pruned` entry (at `now`)
   * naming that anchor, in the same transaction; returns how many were deleted.
   */
  pruneAudit(before: number, now: number): Promise<number>;
}
