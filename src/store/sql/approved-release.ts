/**
 * The outbox entry an approval writes with its decision (Store.approveDelivery). A send held
 * at its release (a scheduled or quiet-hours send that met an approval rule then) already has
 * an entry under its id, finished `released` with the held answer: the approval takes that
 * entry up again, so the send keeps its one id from scheduling to provider.
 */
import { statement } from './dialect.js';
import { OUTBOX_COLUMNS } from './outbox.js';

export const ENQUEUE_APPROVED = statement(
  'enqueue-approved',
  `INSERT INTO outbox (${OUTBOX_COLUMNS.join(', ')}) VALUES (${OUTBOX_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}) ` +
    `ON CONFLICT (id) DO UPDATE SET call = excluded.call, state = excluded.state, send_at = excluded.send_at, due_at = excluded.due_at, ` +
    `owner = NULL, claimed_at = NULL, finished_at = NULL, outcome = NULL WHERE outbox.state = 'released'`,
);
