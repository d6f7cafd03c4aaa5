/**
 * Versioned schema migrations, one ordered list for both stores. Each step has the same
 * meaning on SQLite and PostgreSQL; only the dialect differs. A step, once released, is
 * never edited: a change is a new step. Applied versions live in `schema_migrations`.
 * The steps are kept by era in ./migrations/; a new step goes at the end of the last.
 */
import type { Migration } from './migrations/migration.js';
import { OUTBOX_AND_AUDIT } from './migrations/outbox-and-audit.js';
import { SENDS_AND_RECEIPTS } from './migrations/sends-and-receipts.js';

export type { Migration } from './migrations/migration.js';

export const MIGRATIONS: readonly Migration[] = [...SENDS_AND_RECEIPTS, ...OUTBOX_AND_AUDIT];

/** The newest schema version this build knows; a store newer than this refuses to open. */
export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
