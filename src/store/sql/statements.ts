/**
 * The statements both engines run unchanged, in one place so the two cannot drift apart.
 * What differs (the claim, rate admission, held receipts, banner listing, locks) stays in
 * each engine's file.
 */
import { bannerStatusSql } from '../banner-status.js';
import { statement, type Statement } from './dialect.js';
import { DELIVERY_COLUMNS } from './rows.js';

export const BANNER_COLUMNS = 'id, text, audience, severity, dedupe_key, created_at, expires_at, dismissed_at';

export const INSERT_DELIVERY = statement(
  'insert-delivery',
  `INSERT INTO deliveries (${DELIVERY_COLUMNS.join(', ')}) VALUES (${DELIVERY_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
);
export const LIST_DELIVERIES = statement('list-deliveries', 'SELECT * FROM deliveries ORDER BY created_at DESC, seq DESC LIMIT $1');
// Each filter is a parameter that is either NULL (admits all) or the value: one statement, prepared once.
const FIND_WHERE =
  'WHERE (CAST($1 AS TEXT) IS NULL OR status = $1) AND (CAST($2 AS TEXT) IS NULL OR via = $2) ' +
  'AND (CAST($3 AS TEXT) IS NULL OR client = $3) AND (CAST($4 AS BIGINT) IS NULL OR created_at >= $4) ' +
  'AND (CAST($5 AS BIGINT) IS NULL OR created_at < $5) ' +
  // After a page: the rows listed after delivery $7 (newest first), ties in created_at included.
  'AND (CAST($7 AS TEXT) IS NULL OR (created_at, seq) < (SELECT created_at, seq FROM deliveries WHERE id = $7)) ORDER BY created_at DESC, seq DESC LIMIT $6';
export const FIND_DELIVERIES = statement('find-deliveries', `SELECT * FROM deliveries ${FIND_WHERE}`);

/**
 * FIND_DELIVERIES for a page that lists many, reading no more than it shows: a payload over
 * $8 bytes of JSON text comes as its first $8 characters only (no JSON is parsed for it),
 * with its size in bytes; the approval only when $9 is 1, and without a held send's call,
 * which grows with its attachments. `size` reads a value's size without reading the value
 * (SQLite's octet_length takes it from the record header); the engine says how it reads JSON.
 */
export function findListings(engine: string, e: { payload: string; withoutCall: string }): Statement {
  const light = DELIVERY_COLUMNS.filter((c) => c !== 'payload' && c !== 'approval');
  const size = `octet_length(${e.payload})`;
  return statement(
    `${engine}-find-listings`,
    `SELECT ${light.join(', ')}, CASE WHEN ${size} <= CAST($8 AS INTEGER) THEN payload END AS payload, ` +
      `CASE WHEN ${size} > CAST($8 AS INTEGER) THEN substr(${e.payload}, 1, CAST($8 AS INTEGER)) END AS payload_head, ${size} AS payload_bytes, ` +
      `CASE WHEN CAST($9 AS INTEGER) = 1 THEN ${e.withoutCall} END AS approval FROM deliveries ${FIND_WHERE}`,
  );
}

/**
 * A decision on a held send, bound to the payload hash it was made on ($6): an edit that
 * changed the payload after the decider read the row leaves the row as it is. The hash is
 * compared here, in the statement that decides, not on an earlier read.
 */
export const DECIDE_DELIVERY = statement(
  'decide-delivery',
  "UPDATE deliveries SET status = $1, approval = $2, status_updated_at = $3 WHERE id = $4 AND status = $5 AND approval ->> 'payload_sha256' = $6 RETURNING id",
);
export const RECORD_RELEASE = statement(
  'record-release',
  `UPDATE deliveries SET status = $1, provider_message_id = $2, error_code = $3, attempts = $4, attempt_log = $5, latency_ms = $6, ` +
    `provider_status = $7, status_updated_at = $8, provider_conversation = $10 WHERE id = $9 AND status = 'approved' RETURNING id`,
);
export const EXPIRE_PENDING = statement(
  'expire-pending',
  `UPDATE deliveries SET status = 'expired', status_updated_at = $1 WHERE status = 'pending_approval' AND created_at < $2 RETURNING id, approval`,
);
export const GET_DELIVERY = statement('get-delivery', 'SELECT * FROM deliveries WHERE id = $1');
export const DELIVERY_BY_PROVIDER_ID = statement(
  'delivery-by-provider-id',
  'SELECT * FROM deliveries WHERE via = $1 AND provider_message_id = $2 ORDER BY seq LIMIT 1',
);
/** Compare-and-set on the status; a provider id is set only where there is none yet. */
export const UPDATE_DELIVERY_STATUS = statement(
  'update-delivery-status',
  'UPDATE deliveries SET status = $1, provider_status = $2, provider_status_code = $3, status_updated_at = $4, provider_message_id = COALESCE(provider_message_id, $5) WHERE id = $6 AND status = $7',
);

/** A caller's edit or retraction: compare-and-set on the status, the payload replaced. */
export const AMEND_DELIVERY = statement(
  'amend-delivery',
  'UPDATE deliveries SET status = $1, payload = $2, provider_status = $3, provider_status_code = NULL, status_updated_at = $4 WHERE id = $5 AND status = $6 RETURNING id, client',
);

// Fenced: each write names the owner, so one that lost its claim changes nothing.
export const MARK_SENDING = statement(
  'mark-sending',
  `UPDATE idempotency_keys SET phase = 'sending', notification_id = COALESCE($1, notification_id) WHERE key = $2 AND owner = $3 AND state = 'pending'`,
);
export const COMPLETE = statement(
  'complete',
  `UPDATE idempotency_keys SET state = 'done', result = $1 WHERE key = $2 AND owner = $3 AND state = 'pending'`,
);
/** Only a pending claim: a finished send's result must stay replayable. */
export const RELEASE = statement('release', `DELETE FROM idempotency_keys WHERE key = $1 AND owner = $2 AND state = 'pending'`);
export const CLAIM_READ = statement(
  'claim-read',
  'SELECT payload_hash, state, phase, result, claimed_at, notification_id FROM idempotency_keys WHERE key = $1',
);

export const ADD_OPT_OUT = statement(
  'add-opt-out',
  'INSERT INTO opt_outs (via, recipient, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
);

export const LIST_CONTACTS = statement('list-contacts', 'SELECT via, recipient, approved_at, client FROM contacts ORDER BY via, recipient');
export const FORGET_CONTACT = statement('forget-contact', 'DELETE FROM contacts WHERE via = $1 AND recipient = $2');

export const INSERT_BANNER = statement('insert-banner', `INSERT INTO banners (${BANNER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`);
export const PURGE_BANNERS = statement('purge-banners', 'DELETE FROM banners WHERE dismissed_at < $1 OR expires_at < $1');
export const GET_BANNER = statement('get-banner', `SELECT ${BANNER_COLUMNS} FROM banners WHERE id = $1`);
export const ACTIVE_BY_DEDUPE = statement(
  'active-by-dedupe',
  `SELECT ${BANNER_COLUMNS} FROM banners WHERE audience = $1 AND dedupe_key = $2 AND ${bannerStatusSql('active', '$3')} ORDER BY created_at DESC, seq DESC LIMIT 1`,
);
export const DISMISS_BANNER = statement('dismiss-banner', 'UPDATE banners SET dismissed_at = $1 WHERE id = $2 AND dismissed_at IS NULL');
/** Dismisses the banner only while it is active, so racing callers learn from the row count alone which of them did. */
export const END_BANNER = statement(
  'end-banner',
  `UPDATE banners SET dismissed_at = $1 WHERE id = $2 AND ${bannerStatusSql('active', '$1')}`,
);
export const BANNERS_VERSION = statement('banners-version', 'SELECT epoch, n FROM banners_version WHERE id = 1');
