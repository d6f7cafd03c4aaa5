/** What this folder's aggregate files (claims, outbox, receipts, counters, banners, audit) use of the engine (./store.ts). */
import type pg from 'pg';
import type { Logger } from '../../core/log.js';
import type { AuditedChange } from '../audit.js';
import type { DeliveryRecord } from '../ports/deliveries.js';
import { statement, type Statement } from '../sql/dialect.js';
import type { Row } from '../sql/rows.js';

/**
 * Statements are prepared once per connection (named): PostgreSQL then parses and plans
 * each once, not on every call (the claim's CTE is as dear to plan as to run).
 */
export const prepared = statement;

export interface PgEngine {
  readonly pool: pg.Pool;
  readonly log: Logger;
  /** Runs `fn` in one transaction on one connection: committed when it returns, rolled back when it throws. */
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** Appends the audit entries of `changes` inside the transaction on `client`, after the write's own statements. */
  appendAudit(client: pg.PoolClient, changes: readonly AuditedChange[]): Promise<void>;
  /** Runs write `s` and appends the audit entries of the rows it changed, in one transaction; the rows. */
  audited(s: Statement, params: readonly unknown[], changes: (rows: Row[]) => AuditedChange[]): Promise<Row[]>;
  toDelivery(r: Row): DeliveryRecord;
}
