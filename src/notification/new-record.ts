/** A send's delivery record before any attempt: held, refused or starting, every write of a send begins here. */
import type { DeliveryRecord } from '../store/ports/deliveries.js';

export function newDeliveryRecord(
  channel: { name: string; provider: { name: string } },
  r: Pick<DeliveryRecord, 'id' | 'status' | 'payload' | 'error_code' | 'client' | 'idempotency_key' | 'approval'> & { at: number },
): DeliveryRecord {
  return {
    id: r.id,
    via: channel.name,
    status: r.status,
    provider: channel.provider.name,
    provider_message_id: null,
    payload: r.payload,
    error_code: r.error_code,
    attempts: 0,
    attempt_log: [],
    latency_ms: 0,
    client: r.client,
    idempotency_key: r.idempotency_key,
    created_at: r.at,
    provider_status: null,
    provider_status_code: null,
    status_updated_at: r.at,
    approval: r.approval,
  };
}
