/** Receipts applied to a real SQLite store: found by provider message id, moved only forward, compare-and-set; held when they outrun their record. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ReceiptReport } from '../channels/channel.js';
import { silentLogger } from '../core/log.js';
import { openSqliteStore, type SqliteStore } from '../store/sqlite/store.js';
import type { DeliveryRecord, DeliveryStatus, Store } from '../store/types.js';
import { applyEarlyReceipts, applyReceipt, EARLY_RECEIPT_MAX_AGE_MS } from './status-receipt.js';

const T0 = Date.UTC(2026, 5, 1);
let store: SqliteStore;

beforeEach(async () => {
  store = await openSqliteStore({ file: join(mkdtempSync(join(tmpdir(), 'receipts-')), 'notify.db'), log: silentLogger });
});
afterEach(async () => store.close());

function sms(id: string, sid: string, status: DeliveryStatus): DeliveryRecord {
  return {
    id,
    via: 'sms',
    status,
    provider: 'twilio',
    provider_message_id: sid,
    payload: {},
    error_code: null,
    attempts: 1,
    attempt_log: [],
    latency_ms: 1,
    client: 'bot',
    idempotency_key: null,
    created_at: T0,
    provider_status: 'queued',
    provider_status_code: null,
    status_updated_at: T0,
  };
}

const report = (sid: string, event: ReceiptReport['event'], code: string | null = null): ReceiptReport => ({
  providerMessageId: sid,
  event,
  providerStatus: event,
  code,
});

/** What is still held for `record` (recorded), taken without changing it. */
const leftHeld = async (record: DeliveryRecord) =>
  (await store.settleHeldReceipts(record, (_d, rows) => ({ change: null, result: rows }))) ?? [];

const deps = (s: Store = store) => ({ store: s, log: silentLogger, now: () => T0 + 1000 });

describe('applyReceipt', () => {
  it('moves a sent SMS to undelivered, keeping the provider status and code, and ignores what would go back', async () => {
    await store.writeRecord(sms('ntf_1', 'SM1', 'sent'));
    expect(await applyReceipt(deps(), 'sms', report('SM1', 'undelivered', '30003'))).toBe('applied');
    expect(await store.getDelivery('ntf_1')).toMatchObject({
      status: 'undelivered',
      provider_status: 'undelivered',
      provider_status_code: '30003',
      status_updated_at: T0 + 1000,
    });
    expect(await applyReceipt(deps(), 'sms', report('SM1', 'delivered'))).toBe('ignored');
    expect(await store.getDelivery('ntf_1')).toMatchObject({ status: 'undelivered', provider_status_code: '30003' });
  });

  it('matches the channel too: the same provider id on another channel is another message', async () => {
    await store.writeRecord({ ...sms('ntf_2', 'SM2', 'sent'), via: 'email' });
    expect(await applyReceipt(deps(), 'sms', report('SM2', 'delivered'))).toBe('held');
    expect((await store.getDelivery('ntf_2'))!.status).toBe('sent');
  });

  it('holds a receipt that outran its record, and applies it once when the record lands (a Twilio callback before its API answer)', async () => {
    expect(await applyReceipt(deps(), 'sms', report('SM3', 'delivered'))).toBe('held');
    const record = sms('ntf_3', 'SM3', 'sent');
    await store.writeRecord(record);
    expect([...(await applyEarlyReceipts(deps(), record)).values()]).toEqual(['applied']);
    expect(await store.getDelivery('ntf_3')).toMatchObject({
      status: 'delivered',
      provider_status: 'delivered',
      status_updated_at: T0 + 1000,
    });
    // Taken: a second look finds nothing left to apply.
    expect((await applyEarlyReceipts(deps(), record)).size).toBe(0);
    expect(await leftHeld(record)).toEqual([]);
  });

  it('applies held receipts in arrival order: a final state reached first stays', async () => {
    await applyReceipt(deps(), 'sms', report('SM5', 'undelivered', '30003'));
    await applyReceipt(deps(), 'sms', report('SM5', 'delivered'));
    const record = sms('ntf_5', 'SM5', 'sent');
    await store.writeRecord(record);
    expect([...(await applyEarlyReceipts(deps(), record)).values()]).toEqual(['applied', 'ignored']);
    expect(await store.getDelivery('ntf_5')).toMatchObject({ status: 'undelivered', provider_status_code: '30003' });
  });

  it('a record that lands between the lookup and the hold still gets the receipt (the receipt looks again after holding)', async () => {
    const record = sms('ntf_6', 'SM6', 'sent');
    const racing: Store = Object.assign(Object.create(store) as Store, {
      holdReceipt: async (...args: Parameters<Store['holdReceipt']>) => {
        // The send records and takes held receipts (none yet) just before this one is stored.
        await store.writeRecord(record);
        expect((await applyEarlyReceipts(deps(), record)).size).toBe(0);
        return store.holdReceipt(...args);
      },
    });
    expect(await applyReceipt(deps(racing), 'sms', report('SM6', 'delivered'))).toBe('applied');
    expect((await store.getDelivery('ntf_6'))!.status).toBe('delivered');
    expect(await leftHeld(record)).toEqual([]);
  });

  it("a record that lands just after the hold takes the receipt; the receipt's second look then applies nothing twice", async () => {
    const record = sms('ntf_7', 'SM7', 'sent');
    let writes = 0;
    const counting: Store = Object.assign(Object.create(store) as Store, {
      updateDeliveryStatus: async (...args: Parameters<Store['updateDeliveryStatus']>) => {
        const written = await store.updateDeliveryStatus(...args);
        if (written) writes++;
        return written;
      },
      // Held receipts are written with their take: a fold that returns a change writes once.
      settleHeldReceipts: async <T>(...[target, fold]: Parameters<Store['settleHeldReceipts']>) =>
        store.settleHeldReceipts(target, (d, rows) => {
          const settled = fold(d, rows);
          if (settled.change) writes++;
          return settled as { change: typeof settled.change; result: T };
        }),
      holdReceipt: async (...args: Parameters<Store['holdReceipt']>) => {
        const seq = await store.holdReceipt(...args);
        await store.writeRecord(record);
        expect([...(await applyEarlyReceipts(deps(counting), record)).values()]).toEqual(['applied']);
        return seq;
      },
    });
    expect(await applyReceipt(deps(counting), 'sms', report('SM7', 'sent'))).toBe('held');
    expect(writes).toBe(1);
    expect(await store.getDelivery('ntf_7')).toMatchObject({ status: 'sent', provider_status: 'sent' });
  });

  it('ignores a held receipt past its age, and answers unknown_message when the store holds no more', async () => {
    await applyReceipt(deps(), 'sms', report('SM8', 'delivered'));
    const record = sms('ntf_8', 'SM8', 'sent');
    await store.writeRecord(record);
    const later = { ...deps(), now: () => T0 + 1000 + EARLY_RECEIPT_MAX_AGE_MS };
    expect((await applyEarlyReceipts(later, record)).size).toBe(0);
    expect((await store.getDelivery('ntf_8'))!.status).toBe('sent');

    const full: Store = Object.assign(Object.create(store) as Store, { holdReceipt: async () => null });
    expect(await applyReceipt(deps(full), 'sms', report('SM9', 'delivered'))).toBe('unknown_message');
  });

  it('re-reads when another receipt moved the notification first, and then never moves it back', async () => {
    await store.writeRecord(sms('ntf_4', 'SM4', 'sent'));
    // Another replica's `delivered` lands between this one's read and its write.
    const racing: Store = Object.assign(Object.create(store) as Store, {
      updateDeliveryStatus: async (...args: Parameters<Store['updateDeliveryStatus']>) => {
        await store.updateDeliveryStatus('ntf_4', {
          from: 'sent',
          status: 'delivered',
          provider_status: 'delivered',
          provider_status_code: null,
          at: T0 + 500,
        });
        racing.updateDeliveryStatus = store.updateDeliveryStatus.bind(store);
        return store.updateDeliveryStatus(...args);
      },
    });
    expect(await applyReceipt(deps(racing), 'sms', report('SM4', 'sent'))).toBe('ignored');
    expect(await store.getDelivery('ntf_4')).toMatchObject({
      status: 'delivered',
      provider_status: 'delivered',
      status_updated_at: T0 + 500,
    });
  });
});

describe('a send whose answer was lost (unknown, no provider id)', () => {
  const lost = (id: string): DeliveryRecord => ({ ...sms(id, 'x', 'unknown'), provider_message_id: null });
  const withId = (sid: string, event: ReceiptReport['event'], notificationId: string): ReceiptReport => ({
    ...report(sid, event),
    notificationId,
  });

  it('is settled by a receipt that carries its notification id, which gives it the provider id for the receipts after', async () => {
    await store.writeRecord(lost('ntf_u1'));
    // Without our id the provider's id alone finds nothing.
    expect(await applyReceipt(deps(), 'sms', report('SMu1', 'queued'))).toBe('held');
    expect(await applyReceipt(deps(), 'sms', withId('SMu1', 'sent', 'ntf_u1'))).toBe('applied');
    expect(await store.getDelivery('ntf_u1')).toMatchObject({ status: 'sent', provider_message_id: 'SMu1', provider_status: 'sent' });
    expect(await applyReceipt(deps(), 'sms', report('SMu1', 'delivered'))).toBe('applied');
    expect((await store.getDelivery('ntf_u1'))!.status).toBe('delivered');
  });

  it('takes, as its record lands, a receipt that carried its id and outran it', async () => {
    expect(await applyReceipt(deps(), 'sms', withId('SMu2', 'sent', 'ntf_u2'))).toBe('held');
    const record = lost('ntf_u2');
    await store.writeRecord(record);
    expect([...(await applyEarlyReceipts(deps(), record)).values()]).toEqual(['applied']);
    expect(await store.getDelivery('ntf_u2')).toMatchObject({ status: 'sent', provider_message_id: 'SMu2' });
  });

  it('never moves a record the provider knows by another id, nor one of another channel', async () => {
    await store.writeRecord(sms('ntf_u3', 'SMreal', 'sent'));
    expect(await applyReceipt(deps(), 'sms', withId('SMother', 'failed', 'ntf_u3'))).toBe('held');
    await store.writeRecord({ ...lost('ntf_u4'), via: 'email' });
    expect(await applyReceipt(deps(), 'sms', withId('SMu4', 'failed', 'ntf_u4'))).toBe('held');
    expect(await store.getDelivery('ntf_u3')).toMatchObject({ status: 'sent', provider_message_id: 'SMreal' });
    expect(await store.getDelivery('ntf_u4')).toMatchObject({ status: 'unknown', provider_message_id: null });
  });

  it('one callback replayed 10,050 times is one held row; the next genuine early receipt is still held and applied', async () => {
    for (let i = 0; i < 10_050; i++) expect(await applyReceipt(deps(), 'sms', report('SMreplayed', 'sent'))).toBe('held');
    expect(await applyReceipt(deps(), 'sms', report('SMgenuine', 'delivered'))).toBe('held');
    const record = sms('ntf_g', 'SMgenuine', 'sent');
    await store.writeRecord(record);
    expect([...(await applyEarlyReceipts(deps(), record)).values()]).toEqual(['applied']);
    expect((await store.getDelivery('ntf_g'))!.status).toBe('delivered');
    const replayed = sms('ntf_r', 'SMreplayed', 'sent');
    await store.writeRecord(replayed);
    expect(await leftHeld(replayed)).toHaveLength(1);
  });
});
