import { randomUUID } from 'node:crypto';
import type { BannerRecord } from '../../src/store/types.js';

/** A stored banner for store-level tests: active for an hour from `createdAt`. */
export function bannerRecord(createdAt: number, extra: Partial<BannerRecord> = {}): BannerRecord {
  return {
    id: `bnr_${randomUUID()}`,
    text: 'Maintenance tonight',
    audience: 'all',
    severity: 'info',
    dedupe_key: null,
    created_at: createdAt,
    expires_at: createdAt + 3_600_000,
    dismissed_at: null,
    ...extra,
  };
}
