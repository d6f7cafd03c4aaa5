/** What the Store contract's files (./*.ts) share: the handle on a store under test, the clock, a delivery and a banner. */
import type { BannerRecord, DeliveryRecord, Store } from '../../../src/store/types.js';
import { bannerRecord } from '../../helpers/banner-record.js';

export interface StoreHandle {
  store: Store;
  /** A second store on the same database (another process's view; migrations re-run). */
  reopen(): Promise<Store>;
  cleanup(): Promise<void>;
}

export const T0 = Date.UTC(2026, 0, 1);
export const HOUR = 3_600_000;
export const OPTS = { ttlMs: 24 * HOUR, staleAfterMs: 20_000 };

export function delivery(id: string, created_at: number, extra: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    id,
    via: 'email',
    status: 'dry_run',
    provider: 'dry-run',
    provider_message_id: null,
    payload: { envelope: { from: 'a@x', to: ['b@y'] }, raw: 'Subject: h\u00e9llo \u2603\r\n\r\nbody' },
    error_code: null,
    attempts: 1,
    attempt_log: [{ attempt: 1, outcome: 'sent', latency_ms: 3, at: created_at }],
    latency_ms: 3,
    client: null,
    idempotency_key: null,
    created_at,
    provider_status: null,
    provider_status_code: null,
    status_updated_at: created_at,
    approval: null,
    ...extra,
  };
}

export const banner = (extra: Partial<BannerRecord> = {}) => bannerRecord(T0, extra);
