/**
 * The console's list of sends that have no delivery record: waiting in the outbox (send_at,
 * quiet hours) or ended there (cancelled, expired), the same on both engines. Listed with the
 * delivery log, newest first, under the same filters.
 */
import { statement } from './dialect.js';

/**
 * $1 state, $2 via, $3 client, $4 since, $5 until: null admits all. $7/$8 the page cursor:
 * entries created before $7, or at $7 with an id before $8 (when $8 is not null).
 */
export const FIND_UNRECORDED_OUTBOX = statement(
  'find-unrecorded-outbox',
  'SELECT * FROM outbox o WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = o.id) ' +
    'AND (CAST($1 AS TEXT) IS NULL OR o.state = $1) AND (CAST($2 AS TEXT) IS NULL OR o.via = $2) ' +
    'AND (CAST($3 AS TEXT) IS NULL OR o.client = $3) AND (CAST($4 AS BIGINT) IS NULL OR o.created_at >= $4) ' +
    'AND (CAST($5 AS BIGINT) IS NULL OR o.created_at < $5) ' +
    'AND (CAST($7 AS BIGINT) IS NULL OR o.created_at < $7 OR (o.created_at = $7 AND CAST($8 AS TEXT) IS NOT NULL AND o.id < $8)) ' +
    'ORDER BY o.created_at DESC, o.id DESC LIMIT $6',
);
