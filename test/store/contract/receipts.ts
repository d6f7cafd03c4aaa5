/** Held receipts (the deliveries port): held until their record lands, settled once across replicas. Part of the Store contract (../suite.ts), run on both engines. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryRecord, HeldReceipt, Store } from '../../../src/store/types.js';
import { silentLogger } from '../../../src/core/log.js';
import { applyEarlyReceipts, applyReceipt } from '../../../src/notification/status-receipt.js';
import { delivery, HOUR, T0, type StoreHandle } from './fixtures.js';

export function receiptsContract(open: () => StoreHandle): void {
  let h: StoreHandle;
  let store: Store;
  beforeEach(() => {
    h = open();
    store = h.store;
  });

  describe('held receipts', () => {
    const held = (
      id: string,
      event: HeldReceipt['event'],
      received_at: number,
      via = 'sms',
      notification_id: string | null = null,
    ): HeldReceipt => ({
      via,
      provider_message_id: id,
      notification_id,
      event,
      provider_status: event,
      provider_status_code: event === 'undelivered' ? '30003' : null,
      received_at,
    });
    const bounds = (now: number, maxRows = 100, maxPerMessage = 16) => ({ now, maxAgeMs: HOUR, maxRows, maxPerMessage });
    const sms = (id: string, sid: string | null, status: DeliveryRecord['status'] = 'sent') =>
      delivery(id, T0, { via: 'sms', status, provider: 'twilio', provider_message_id: sid, provider_status: 'queued' });
    /** Takes what is held for `target` (recorded first if it is not), changing nothing; [] when nothing is. */
    const take = async (s: Store, target: DeliveryRecord) => {
      if (!(await s.getDelivery(target.id))) await s.writeRecord(target);
      return (await s.settleHeldReceipts(target, (_d, rows) => ({ change: null, result: [...rows] }))) ?? [];
    };

    it('holds receipts and hands them back once, oldest first, for their channel and message (or notification id) only, to any store', async () => {
      const a = await store.holdReceipt(held('SM1', 'sent', T0), bounds(T0));
      const b = await store.holdReceipt(held('SM1', 'undelivered', T0 + 1), bounds(T0 + 1));
      await store.holdReceipt(held('SM1', 'delivered', T0 + 2, 'email'), bounds(T0 + 2));
      await store.holdReceipt(held('SM2', 'delivered', T0 + 3), bounds(T0 + 3));
      const c = await store.holdReceipt(held('SM9', 'sent', T0 + 4, 'sms', 'ntf_u'), bounds(T0 + 4));
      expect(a).not.toBeNull();
      expect(b).toBeGreaterThan(a!);
      const other = await h.reopen();
      try {
        expect(await take(other, sms('ntf_h1', 'SM1'))).toEqual([
          { seq: a, ...held('SM1', 'sent', T0) },
          { seq: b, ...held('SM1', 'undelivered', T0 + 1) },
        ]);
        expect(await take(store, sms('ntf_h1', 'SM1'))).toEqual([]);
        expect((await take(store, { ...sms('ntf_h2', 'SM1'), via: 'email' })).map((r) => r.event)).toEqual(['delivered']);
        expect((await take(other, sms('ntf_h3', 'SM2'))).map((r) => r.event)).toEqual(['delivered']);
        // A record without the provider's id (its send's answer was lost) takes what names it.
        expect(await take(other, sms('ntf_u', null, 'unknown'))).toEqual([{ seq: c, ...held('SM9', 'sent', T0 + 4, 'sms', 'ntf_u') }]);
      } finally {
        await other.close();
      }
    });

    it("writes the fold's change with the take, in one step, and gives a record without one the provider id", async () => {
      await store.holdReceipt(held('SM4', 'delivered', T0, 'sms', 'ntf_f'), bounds(T0));
      const record = sms('ntf_f', null, 'unknown');
      await store.writeRecord(record);
      const seen = await store.settleHeldReceipts(record, (d, rows) => ({
        change: {
          from: d.status,
          status: 'delivered',
          provider_status: 'delivered',
          provider_status_code: null,
          at: T0 + 7,
          provider_message_id: rows[0]!.provider_message_id,
        },
        result: rows.length,
      }));
      expect(seen).toBe(1);
      expect(await store.getDelivery('ntf_f')).toMatchObject({
        status: 'delivered',
        provider_message_id: 'SM4',
        status_updated_at: T0 + 7,
      });
      expect((await store.findDeliveryByProviderMessage('sms', 'SM4'))?.id).toBe('ntf_f');
      // A fold that throws (a crash between the take and the write) leaves the receipts held.
      await store.holdReceipt(held('SM4', 'failed', T0 + 1, 'sms', 'ntf_f'), bounds(T0 + 1));
      await expect(
        store.settleHeldReceipts(record, () => {
          throw new Error('crash');
        }),
      ).rejects.toThrow('crash');
      expect((await take(store, record)).map((r) => r.event)).toEqual(['failed']);
      // A provider id once set is never replaced.
      expect(
        await store.updateDeliveryStatus('ntf_f', {
          from: 'delivered',
          status: 'delivered',
          provider_status: 'read',
          provider_status_code: null,
          at: T0 + 8,
          provider_message_id: 'SMother',
        }),
      ).toBe(true);
      expect((await store.getDelivery('ntf_f'))!.provider_message_id).toBe('SM4');
    });

    it('refuses a receipt at the cap, counting only receipts younger than the age limit, and purges older ones', async () => {
      expect(await store.holdReceipt(held('SM1', 'sent', T0), bounds(T0, 2))).not.toBeNull();
      expect(await store.holdReceipt(held('SM2', 'sent', T0 + 1), bounds(T0 + 1, 2))).not.toBeNull();
      expect(await store.holdReceipt(held('SM3', 'sent', T0 + 2), bounds(T0 + 2, 2))).toBeNull();
      expect(await take(store, sms('ntf_c3', 'SM3'))).toEqual([]);
      // An hour on, SM1 is past the age limit: purged, so there is room again.
      expect(await store.holdReceipt(held('SM3', 'sent', T0 + HOUR), bounds(T0 + HOUR, 2))).not.toBeNull();
      expect(await take(store, sms('ntf_c1', 'SM1'))).toEqual([]);
      expect((await take(store, sms('ntf_c2', 'SM2'))).length).toBe(1);
      expect((await take(store, sms('ntf_c3', 'SM3'))).length).toBe(1);
    });

    it("one receipt replayed many times is one row, a message holds at most its share, and another message's receipt is still held", async () => {
      const other = await h.reopen();
      try {
        const first = await store.holdReceipt(held('SMx', 'sent', T0), bounds(T0, 5, 3));
        const replays = await Promise.all(
          Array.from({ length: 200 }, (_, i) => (i % 2 ? other : store).holdReceipt(held('SMx', 'sent', T0), bounds(T0 + i, 5, 3))),
        );
        expect(new Set(replays)).toEqual(new Set([first]));
        // Distinct statuses of one message: up to its share (3), then refused.
        expect(await store.holdReceipt(held('SMx', 'delivered', T0 + 1), bounds(T0 + 1, 5, 3))).not.toBeNull();
        expect(await store.holdReceipt(held('SMx', 'failed', T0 + 2), bounds(T0 + 2, 5, 3))).not.toBeNull();
        expect(await store.holdReceipt(held('SMx', 'queued', T0 + 3), bounds(T0 + 3, 5, 3))).toBeNull();
        // The table (5) still has room for another message's genuine receipt.
        expect(await other.holdReceipt(held('SMy', 'delivered', T0 + 4), bounds(T0 + 4, 5, 3))).not.toBeNull();
        expect((await take(store, sms('ntf_x', 'SMx'))).map((r) => r.event)).toEqual(['sent', 'delivered', 'failed']);
        expect((await take(other, sms('ntf_y', 'SMy'))).map((r) => r.event)).toEqual(['delivered']);
      } finally {
        await other.close();
      }
    });

    it("receipts racing their sends' records on two stores (webhook replica, sending replica): none lost, none applied twice", async () => {
      const other = await h.reopen();
      try {
        let applied = 0;
        const count = (outcome: string) => {
          if (outcome === 'applied') applied++;
        };
        const deps = (s: Store) => ({ store: s, log: silentLogger, now: () => T0 + 5 });
        // Microtask turns. PostgreSQL's round trips open the windows between a side's write
        // and its look; a SQLite store in one process answers each call at once, so every
        // fourth pair places the record exactly in the receipt's window (after its first
        // look, before its hold), on both stores: only its second look can then find it.
        const turns = async (n: number) => {
          for (let t = 0; t < n; t++) await null;
        };
        const ids = Array.from({ length: 48 }, (_, i) => i);
        await Promise.all(
          ids.map(async (i) => {
            const record = delivery(`ntf_r${i}`, T0, {
              via: 'sms',
              status: 'sent',
              provider: 'twilio',
              provider_message_id: `SMr${i}`,
              provider_status: 'queued',
            });
            const land = async () => {
              await other.writeRecord(record);
              for (const outcome of (await applyEarlyReceipts(deps(other), record)).values()) count(outcome);
            };
            const report = { providerMessageId: `SMr${i}`, event: 'sent' as const, providerStatus: 'sent', code: null };
            if (i % 4 === 0) {
              const inWindow: Store = Object.assign(Object.create(store) as Store, {
                holdReceipt: async (...args: Parameters<Store['holdReceipt']>) => {
                  await land();
                  return store.holdReceipt(...args);
                },
              });
              count(await applyReceipt(deps(inWindow), 'sms', report));
              return;
            }
            await Promise.all([
              turns((i % 6) * 3).then(async () => count(await applyReceipt(deps(store), 'sms', report))),
              turns(Math.floor(i / 6) * 3).then(land),
            ]);
          }),
        );
        expect(applied).toBe(ids.length);
        for (const i of ids) {
          expect((await store.getDelivery(`ntf_r${i}`))!.provider_status).toBe('sent');
          expect(await take(store, sms(`ntf_r${i}`, `SMr${i}`))).toEqual([]);
        }
      } finally {
        await other.close();
      }
    });

    it('gives each held receipt to exactly one of many takers racing on two stores', async () => {
      for (let i = 0; i < 16; i++)
        await store.holdReceipt({ ...held('SM5', 'sent', T0 + i), provider_status: `sent-${i}` }, bounds(T0 + i));
      const record = sms('ntf_t', 'SM5');
      await store.writeRecord(record);
      const other = await h.reopen();
      try {
        const takes = await Promise.all(Array.from({ length: 8 }, (_, i) => take(i % 2 ? other : store, record)));
        const seqs = takes.flat().map((r) => r.seq);
        expect(seqs).toHaveLength(16);
        expect(new Set(seqs).size).toBe(16);
      } finally {
        await other.close();
      }
    });
  });
}
