/** Receipts applied to a real SQLite store: found by provider message id, moved only forward, compare-and-set. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ReceiptReport } from '../channels/channel.js';
import { silentLogger } from '../log.js';
import { openSqliteStore, type SqliteStore } from '../store/sqlite.js';
import type { DeliveryRecord, DeliveryStatus, Store } from '../store/types.js';
import { applyReceipt } from './status-receipt.js';

const T0 = Date.UTC(2026, 5, 1);
let store: SqliteStore;

beforeEach(async () => {
  store = await openSqliteStore({ file: join(mkdtempSync(join(tmpdir(), 'receipts-')), 'notify.db'), log: silentLogger });
});
afterEach(async () => store.close());

function sms(id: string, sid: string, status: DeliveryStatus): DeliveryRecord {
  return {
    id, via: 'sms', status, provider: 'twilio', provider_message_id: sid, payload: {}, error_code: null, attempts: 1,
    attempt_log: [], latency_ms: 1, client: 'bot', idempotency_key: null, created_at: T0,
    provider_status: 'queued', provider_status_code: null, status_updated_at: T0,
  };
}

const report = (sid: string, event: ReceiptReport['event'], code: string | null = null): ReceiptReport => ({
  providerMessageId: sid, event, providerStatus: event, code,
});

const deps = (s: Store = store, sleep = async () => {}) => ({ store: s, log: silentLogger, now: () => T0 + 1000, sleep });

describe('applyReceipt', () => {
  it('moves a sent SMS to undelivered, keeping the provider status and code, and ignores what would go back', async () => {
    await store.recordDelivery(sms('ntf_1', 'SM1', 'sent'));
    expect(await applyReceipt(deps(), 'sms', report('SM1', 'undelivered', '30003'))).toBe('applied');
    expect(await store.getDelivery('ntf_1')).toMatchObject({
      status: 'undelivered', provider_status: 'undelivered', provider_status_code: '30003', status_updated_at: T0 + 1000,
    });
    expect(await applyReceipt(deps(), 'sms', report('SM1', 'delivered'))).toBe('ignored');
    expect(await store.getDelivery('ntf_1')).toMatchObject({ status: 'undelivered', provider_status_code: '30003' });
  });

  it('matches the channel too: the same provider id on another channel is another message', async () => {
    await store.recordDelivery({ ...sms('ntf_2', 'SM2', 'sent'), via: 'email' });
    expect(await applyReceipt(deps(), 'sms', report('SM2', 'delivered'))).toBe('unknown_message');
    expect((await store.getDelivery('ntf_2'))!.status).toBe('sent');
  });

  it('waits for a record its receipt outran, then applies it; gives up after a few lookups', async () => {
    let waits = 0;
    const recordLate = async () => {
      if (++waits === 2) await store.recordDelivery(sms('ntf_3', 'SM3', 'sent'));
    };
    expect(await applyReceipt(deps(store, recordLate), 'sms', report('SM3', 'delivered'))).toBe('applied');
    expect(waits).toBe(2);
    waits = 0;
    expect(await applyReceipt(deps(store, async () => void waits++), 'sms', report('SM-none', 'delivered'))).toBe('unknown_message');
    expect(waits).toBe(4);
  });

  it('re-reads when another receipt moved the notification first, and then never moves it back', async () => {
    await store.recordDelivery(sms('ntf_4', 'SM4', 'sent'));
    // Another replica's `delivered` lands between this one's read and its write.
    const racing: Store = Object.assign(Object.create(store) as Store, {
      updateDeliveryStatus: async (...args: Parameters<Store['updateDeliveryStatus']>) => {
        await store.updateDeliveryStatus('ntf_4', { from: 'sent', status: 'delivered', provider_status: 'delivered', provider_status_code: null, at: T0 + 500 });
        racing.updateDeliveryStatus = store.updateDeliveryStatus.bind(store);
        return store.updateDeliveryStatus(...args);
      },
    });
    expect(await applyReceipt(deps(racing), 'sms', report('SM4', 'sent'))).toBe('ignored');
    expect(await store.getDelivery('ntf_4')).toMatchObject({ status: 'delivered', provider_status: 'delivered', status_updated_at: T0 + 500 });
  });
});
