/**
 * The writes of a person's part in a send, shared by both engines: the outbox entry an
 * approval writes with its decision, and the edits of a send not yet sent.
 */
import { statement } from './dialect.js';
import { OUTBOX_COLUMNS } from './outbox.js';

/**
 * The outbox entry an approval writes with its decision (Store.approveDelivery). A send held
 * at its release (a scheduled or quiet-hours send that met an approval rule then) already has
 * an entry under its id, finished `released` with the held answer (or `cancelled`, by an edit
 * of it while approved): the approval takes that entry up again, so the send keeps its one id.
 */
export const ENQUEUE_APPROVED = statement(
  'enqueue-approved',
  `INSERT INTO outbox (${OUTBOX_COLUMNS.join(', ')}) VALUES (${OUTBOX_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}) ` +
    `ON CONFLICT (id) DO UPDATE SET call = excluded.call, state = excluded.state, send_at = excluded.send_at, due_at = excluded.due_at, ` +
    `owner = NULL, claimed_at = NULL, finished_at = NULL, outcome = NULL WHERE outbox.state IN ('released', 'cancelled')`,
);

/** An edit of a waiting send: its call replaced while it still waits (a release that claimed it first wins). */
export const EDIT_WAITING = statement(
  'edit-waiting',
  `UPDATE outbox SET call = $1 WHERE id = $2 AND state IN ('scheduled', 'held') RETURNING id, client`,
);

/** An edit of a held send: its payload and approval replaced, and the row back to (or still) `pending_approval`, while in `$5`. */
export const REVISE_HELD = statement(
  'revise-held',
  `UPDATE deliveries SET status = 'pending_approval', payload = $1, approval = $2, status_updated_at = $3 WHERE id = $4 AND status = $5 RETURNING id, client`,
);
