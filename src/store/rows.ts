/** Column order shared by both stores' delivery INSERT, so the two cannot drift apart. */
import type { DeliveryRecord } from './types.js';

export const DELIVERY_COLUMNS = [
  'id', 'via', 'status', 'provider', 'provider_message_id', 'payload', 'error_code',
  'attempts', 'attempt_log', 'latency_ms', 'client', 'idempotency_key', 'created_at',
  'provider_status', 'provider_status_code', 'status_updated_at', 'approval',
] as const;

const JSON_COLUMNS = new Set<string>(['payload', 'attempt_log', 'approval']);

/** The values of a delivery record in DELIVERY_COLUMNS order; JSON columns as JSON text. */
export function deliveryValues(r: DeliveryRecord): unknown[] {
  return DELIVERY_COLUMNS.map((c) => (JSON_COLUMNS.has(c) ? JSON.stringify(r[c] ?? null) : r[c]));
}

/** `INSERT INTO deliveries (…) VALUES (…)` with the given placeholder style. */
export function insertDeliverySql(placeholder: (i: number) => string): string {
  return `INSERT INTO deliveries (${DELIVERY_COLUMNS.join(', ')}) VALUES (${DELIVERY_COLUMNS.map((_, i) => placeholder(i + 1)).join(', ')})`;
}
