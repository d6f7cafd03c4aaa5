/**
 * What the shared statements need of an engine: run, get and all over one statement text,
 * and how a JSON column comes back. Statements are written once, with PostgreSQL's `$1…$n`
 * placeholders; the SQLite dialect binds them as named parameters (or as `?` when each
 * appears once, in order), so neither engine rewrites SQL per call.
 */
import type { Row } from './rows.js';

/** A statement: its text, and a name (PostgreSQL prepares a named statement once per connection). */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

export const statement = (name: string, text: string): Statement => ({ name: `notify-${name}`, text });

export interface Dialect {
  /** Runs a write; how many rows it changed. */
  run(s: Statement, params: readonly unknown[]): Promise<number>;
  get(s: Statement, params: readonly unknown[]): Promise<Row | undefined>;
  all(s: Statement, params: readonly unknown[]): Promise<Row[]>;
  /** A JSON column as the driver returns it, decoded (SQLite keeps text, PostgreSQL decodes). */
  json(v: unknown): unknown;
}
