/** What this folder's aggregate files (claims, outbox, receipts, counters, banners, audit) use of the engine (./store.ts). */
import type Database from 'better-sqlite3';
import type { AuditedChange } from '../audit.js';
import type { OptOutCheck } from '../ports/contacts.js';
import type { DeliveryRecord } from '../ports/deliveries.js';
import type { Statement } from '../sql/dialect.js';
import type { OutboxStatements } from '../sql/outbox.js';
import type { Row } from '../sql/rows.js';
import type { Bound } from './connection.js';

export interface SqliteEngine {
  readonly db: Database.Database;
  /** A statement by its SQL text, prepared once. */
  statement(sql: string): Database.Statement;
  /** A shared statement (../sql/), prepared once. */
  shared(s: Statement): Bound;
  /** Appends the audit entries of `changes`; call it inside the IMMEDIATE transaction of the write they describe. */
  appendAudit(changes: readonly AuditedChange[]): void;
  /** The first recipient of `check` that opted out, looked up synchronously (inside a transaction, too). */
  firstOptedOut(check: OptOutCheck): string | undefined;
  toDelivery(r: Row): DeliveryRecord;
  readonly ob: OutboxStatements;
}
