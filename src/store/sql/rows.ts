/** Rows in and out of both stores (column order, row to record), so the two cannot drift apart. */
import type { BannerRecord, ContactRecord, DeliveryRecord, HeldReceipt, RecordWrite, TakenReceipt } from '../types.js';

export const DELIVERY_COLUMNS = [
  'id',
  'via',
  'status',
  'provider',
  'provider_message_id',
  'payload',
  'error_code',
  'attempts',
  'attempt_log',
  'latency_ms',
  'client',
  'idempotency_key',
  'created_at',
  'provider_status',
  'provider_status_code',
  'status_updated_at',
  'approval',
  'provider_conversation',
] as const;

const JSON_COLUMNS = new Set<string>(['payload', 'attempt_log', 'approval']);

/** The values of a delivery record in DELIVERY_COLUMNS order; JSON columns as JSON text. */
export function deliveryValues(r: DeliveryRecord): unknown[] {
  return DELIVERY_COLUMNS.map((c) => (JSON_COLUMNS.has(c) ? JSON.stringify(r[c] ?? null) : (r[c] ?? null)));
}

/** A record write's answer when it was written: one frozen object, so a batch can tell its own answers apart by identity. */
export const WRITTEN: RecordWrite = Object.freeze({ kind: 'written' });

/** A row as a driver returns it. */
export type Row = Record<string, unknown>;

/** BIGINT arrives as a string from pg; our times and counts are well inside 2^53. */
export function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v);
}
export function numOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : num(v);
}

/**
 * A deliveries row as a record. `json` decodes a JSON column: SQLite keeps them as text
 * (JSON.parse), PostgreSQL's jsonb arrives decoded (identity).
 */
export function deliveryFromRow(r: Row, json: (v: unknown) => unknown): DeliveryRecord {
  return {
    id: r.id as string,
    via: r.via as string,
    status: r.status as DeliveryRecord['status'],
    provider: r.provider as string,
    provider_message_id: (r.provider_message_id as string | null) ?? null,
    payload: json(r.payload),
    error_code: (r.error_code as string | null) ?? null,
    attempts: num(r.attempts),
    attempt_log: (json(r.attempt_log) ?? []) as DeliveryRecord['attempt_log'],
    latency_ms: num(r.latency_ms),
    client: (r.client as string | null) ?? null,
    idempotency_key: (r.idempotency_key as string | null) ?? null,
    created_at: num(r.created_at),
    provider_status: (r.provider_status as string | null) ?? null,
    provider_status_code: (r.provider_status_code as string | null) ?? null,
    status_updated_at: num(r.status_updated_at),
    approval: (r.approval === null || r.approval === undefined ? null : json(r.approval)) as DeliveryRecord['approval'],
    // Only where a provider said one (Slack): a record without it reads back as it was written.
    ...(typeof r.provider_conversation === 'string' ? { provider_conversation: r.provider_conversation } : {}),
  };
}

/** Held receipts' columns, as both stores return them. */
export const HELD_RECEIPT_COLUMNS =
  'seq, via, provider_message_id, notification_id, event, provider_status, provider_status_code, received_at';

/** One held receipt per distinct content: a replayed or resent callback is the row it repeats. */
export function heldReceiptFingerprint(r: HeldReceipt): string {
  return JSON.stringify([r.via, r.provider_message_id, r.notification_id, r.event, r.provider_status, r.provider_status_code]);
}

export function heldReceiptFromRow(r: Row): TakenReceipt {
  return {
    seq: num(r.seq),
    via: r.via as string,
    provider_message_id: r.provider_message_id as string,
    notification_id: (r.notification_id as string | null) ?? null,
    event: r.event as HeldReceipt['event'],
    provider_status: r.provider_status as string,
    provider_status_code: (r.provider_status_code as string | null) ?? null,
    received_at: num(r.received_at),
  };
}

export function bannerFromRow(r: Row): BannerRecord {
  return {
    id: r.id as string,
    text: r.text as string,
    audience: r.audience as string,
    severity: r.severity as BannerRecord['severity'],
    dedupe_key: (r.dedupe_key as string | null) ?? null,
    created_at: num(r.created_at),
    expires_at: numOrNull(r.expires_at),
    dismissed_at: numOrNull(r.dismissed_at),
  };
}

export function contactFromRow(r: Row): ContactRecord {
  return {
    via: r.via as string,
    recipient: r.recipient as string,
    approved_at: num(r.approved_at),
    client: (r.client as string | null) ?? null,
  };
}
