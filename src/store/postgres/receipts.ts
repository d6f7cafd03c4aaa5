/** PostgreSQL's held receipts (of the deliveries port): held in one statement, settled under row locks. */
import type {
  DeliveriesPort,
  DeliveryRecord,
  HeldReceipt,
  HeldReceiptBounds,
  HeldReceiptSettlement,
  HeldReceiptTarget,
  TakenReceipt,
} from '../ports/deliveries.js';
import { HELD_RECEIPT_COLUMNS, heldReceiptFingerprint, heldReceiptFromRow, num, type Row } from '../sql/rows.js';
import { statusChangeValues } from '../sql/shared.js';
import * as q from '../sql/statements.js';
import { withClient } from './connection.js';
import type { PgEngine } from './engine.js';

/** Holding and settling receipts, over engine `e`. */
export function postgresReceipts(e: PgEngine): Pick<DeliveriesPort, 'holdReceipt' | 'settleHeldReceipts'> {
  return {
    holdReceipt: (...a) => holdReceipt(e, ...a),
    settleHeldReceipts: (target, fold) => settleHeldReceipts(e, target, fold),
  };
}

async function holdReceipt(
  e: PgEngine,
  r: HeldReceipt,
  { now, maxAgeMs, maxRows, maxPerMessage }: HeldReceiptBounds,
): Promise<number | null> {
  // One statement. The purge and the counts see the same snapshot, so the counts skip the
  // rows being purged. At READ COMMITTED replicas holding at the same instant may pass the
  // caps by as many rows as there are of them: a bound, not an exact limit. The same
  // receipt held at the same instant by two replicas is one row (the unique fingerprint).
  const { rows } = await e.pool.query(
    `WITH purged AS (DELETE FROM held_receipts WHERE received_at <= $8),
     same AS (SELECT seq FROM held_receipts WHERE fingerprint = $11 AND received_at > $8),
     added AS (
       INSERT INTO held_receipts (via, provider_message_id, notification_id, event, provider_status, provider_status_code, received_at, fingerprint)
       SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint, $11::text
       WHERE NOT EXISTS (SELECT 1 FROM same)
         AND (SELECT count(*) FROM held_receipts WHERE received_at > $8) < $9
         AND (SELECT count(*) FROM held_receipts WHERE via = $1 AND provider_message_id = $2 AND received_at > $8) < $10
       ON CONFLICT (fingerprint) DO NOTHING
       RETURNING seq)
     SELECT seq FROM added UNION ALL SELECT seq FROM same`,
    [
      r.via,
      r.provider_message_id,
      r.notification_id,
      r.event,
      r.provider_status,
      r.provider_status_code,
      r.received_at,
      now - maxAgeMs,
      maxRows,
      maxPerMessage,
      heldReceiptFingerprint(r),
    ],
  );
  if (rows[0]) return num((rows[0] as Row).seq);
  // Another replica held the same receipt at the same instant (the insert met its row).
  const { rows: raced } = await e.pool.query('SELECT seq FROM held_receipts WHERE fingerprint = $1', [heldReceiptFingerprint(r)]);
  return raced[0] ? num((raced[0] as Row).seq) : null;
}

async function settleHeldReceipts<T>(
  e: PgEngine,
  target: HeldReceiptTarget,
  fold: (delivery: DeliveryRecord, held: readonly TakenReceipt[]) => HeldReceiptSettlement<T>,
): Promise<T | undefined> {
  const match = 'via = $1 AND (provider_message_id = $2 OR notification_id = $3)';
  const args = [target.via, target.provider_message_id, target.id];
  // Most records have nothing held: one round trip says so. A receipt held after this look
  // finds the record itself (it looks again once it is held).
  const { rows: any } = await e.pool.query(`SELECT 1 FROM held_receipts WHERE ${match} LIMIT 1`, args);
  if (any.length === 0) return undefined;
  return withClient(e.pool, e.log, async (client) => {
    try {
      await client.query('BEGIN');
      // Locked until COMMIT: a racing taker waits, then finds them gone.
      const { rows } = await client.query(`SELECT ${HELD_RECEIPT_COLUMNS} FROM held_receipts WHERE ${match} ORDER BY seq FOR UPDATE`, args);
      const { rows: found } =
        rows.length === 0 ? { rows: [] } : await client.query('SELECT * FROM deliveries WHERE id = $1 FOR UPDATE', [target.id]);
      if (rows.length === 0 || !found[0]) {
        await client.query('COMMIT');
        return undefined;
      }
      const held = (rows as Row[]).map(heldReceiptFromRow);
      const { change, result } = fold(e.toDelivery(found[0] as Row), held);
      if (change && (await client.query({ ...q.UPDATE_DELIVERY_STATUS, values: statusChangeValues(target.id, change) })).rowCount === 1) {
        await e.appendAudit(client, [{ write: 'receipt', id: target.id, change }]);
      }
      await client.query('DELETE FROM held_receipts WHERE seq = ANY($1::bigint[])', [held.map((h) => h.seq)]);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}
