/** SQLite's held receipts (of the deliveries port): held and settled in immediate transactions. */
import type {
  DeliveriesPort,
  DeliveryRecord,
  HeldReceipt,
  HeldReceiptBounds,
  HeldReceiptSettlement,
  HeldReceiptTarget,
  TakenReceipt,
} from '../ports/deliveries.js';
import { HELD_RECEIPT_COLUMNS, heldReceiptFingerprint, heldReceiptFromRow, type Row } from '../sql/rows.js';
import { statusChangeValues } from '../sql/shared.js';
import * as q from '../sql/statements.js';
import type { SqliteEngine } from './engine.js';

/** Holding and settling receipts, over engine `e`. */
export function sqliteReceipts(e: SqliteEngine): Pick<DeliveriesPort, 'holdReceipt' | 'settleHeldReceipts'> {
  return {
    holdReceipt: (...a) => holdReceipt(e, ...a),
    settleHeldReceipts: (target, fold) => settleHeldReceipts(e, target, fold),
  };
}

async function holdReceipt(
  e: SqliteEngine,
  r: HeldReceipt,
  { now, maxAgeMs, maxRows, maxPerMessage }: HeldReceiptBounds,
): Promise<number | null> {
  // IMMEDIATE: the counts and the insert are one step across processes, so the caps hold.
  const tx = e.db.transaction((): number | null => {
    e.statement('DELETE FROM held_receipts WHERE received_at <= ?').run(now - maxAgeMs);
    const fingerprint = heldReceiptFingerprint(r);
    const same = e.statement('SELECT seq FROM held_receipts WHERE fingerprint = ?').get(fingerprint) as { seq: number } | undefined;
    if (same) return Number(same.seq);
    const { n } = e.statement('SELECT count(*) AS n FROM held_receipts').get() as { n: number };
    if (n >= maxRows) return null;
    const { m } = e
      .statement('SELECT count(*) AS m FROM held_receipts WHERE via = ? AND provider_message_id = ?')
      .get(r.via, r.provider_message_id) as {
      m: number;
    };
    if (m >= maxPerMessage) return null;
    const { lastInsertRowid } = e
      .statement(
        'INSERT INTO held_receipts (via, provider_message_id, notification_id, event, provider_status, provider_status_code, received_at, fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(r.via, r.provider_message_id, r.notification_id, r.event, r.provider_status, r.provider_status_code, r.received_at, fingerprint);
    return Number(lastInsertRowid);
  });
  return tx.immediate();
}

async function settleHeldReceipts<T>(
  e: SqliteEngine,
  target: HeldReceiptTarget,
  fold: (delivery: DeliveryRecord, held: readonly TakenReceipt[]) => HeldReceiptSettlement<T>,
): Promise<T | undefined> {
  const match = 'via = ? AND (provider_message_id = ? OR notification_id = ?)';
  const args = [target.via, target.provider_message_id, target.id];
  // Most records have nothing held: a read says so without taking the write lock (as on
  // PostgreSQL). A receipt held after this look finds the record itself (it looks again).
  if (e.statement(`SELECT 1 FROM held_receipts WHERE ${match} LIMIT 1`).get(...args) === undefined) return undefined;
  // IMMEDIATE: from the read to the delete no other process takes these rows or moves the delivery.
  const tx = e.db.transaction((): T | undefined => {
    const rows = e.statement(`SELECT ${HELD_RECEIPT_COLUMNS} FROM held_receipts WHERE ${match} ORDER BY seq`).all(...args) as Row[];
    if (rows.length === 0) return undefined;
    const row = e.shared(q.GET_DELIVERY).get([target.id]);
    if (!row) return undefined;
    const held = rows.map(heldReceiptFromRow);
    const { change, result } = fold(e.toDelivery(row), held);
    if (change && e.shared(q.UPDATE_DELIVERY_STATUS).run(statusChangeValues(target.id, change)).changes === 1) {
      e.appendAudit([{ write: 'receipt', id: target.id, change }]);
    }
    const del = e.statement('DELETE FROM held_receipts WHERE seq = ?');
    for (const h of held) del.run(h.seq);
    return result;
  });
  return tx.immediate();
}
