/** The counters port: rate windows admitting all buckets or none (caps: ./outbox.ts charges them across handles). Part of the Store contract (../suite.ts), run on both engines. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/types.js';
import { HOUR, T0, type StoreHandle } from './fixtures.js';

export function countersContract(open: () => StoreHandle): void {
  let h: StoreHandle;
  let store: Store;
  beforeEach(() => {
    h = open();
    store = h.store;
  });

  describe('rate limits', () => {
    const bucket = (key: string, limit: number, windowMs = HOUR) => ({ key, limit, windowMs });

    it('admits up to the limit in a sliding window, then says how long until there is room', async () => {
      const b = bucket('c:sms', 2, 60_000);
      expect(await store.admitRate([b], T0)).toEqual({ admitted: true });
      expect(await store.admitRate([b], T0 + 30_000)).toEqual({ admitted: true });
      expect(await store.admitRate([b], T0 + 59_999)).toEqual({ admitted: false, waitMs: [1] });
      // The first admission leaves the window at exactly T0 + 60 s.
      expect(await store.admitRate([b], T0 + 60_000)).toEqual({ admitted: true });
      expect(await store.admitRate([b], T0 + 60_001)).toEqual({ admitted: false, waitMs: [29_999] });
      expect(await store.admitRate([bucket('other', 2, 60_000)], T0 + 60_001)).toEqual({ admitted: true });
    });

    it('admits into every bucket or none; a refusal counts nowhere', async () => {
      const [all, sms] = [bucket('c:*', 1), bucket('c:sms', 5)];
      expect(await store.admitRate([all, sms], T0)).toEqual({ admitted: true });
      for (let i = 1; i <= 3; i++) {
        expect(await store.admitRate([all, sms], T0 + i)).toEqual({ admitted: false, waitMs: [HOUR - i, null] });
      }
      // sms holds one admission (the first), not four.
      expect(await store.admitRate([bucket('c:sms', 2)], T0 + 10)).toEqual({ admitted: true });
      expect(await store.admitRate([bucket('c:sms', 2)], T0 + 11)).toMatchObject({ admitted: false });
    });

    it('refuses everything in a bucket whose limit is 0', async () => {
      expect(await store.admitRate([bucket('zero', 0, 1000)], T0)).toEqual({ admitted: false, waitMs: [1000] });
    });

    it('admits exactly the limit of many simultaneous calls over two stores on one database', async () => {
      const other = await h.reopen();
      const b = bucket('burst', 7);
      const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? other : store).admitRate([b], T0 + i)));
      expect(decisions.filter((d) => d.admitted)).toHaveLength(7);
      expect(await other.admitRate([b], T0 + 100)).toMatchObject({ admitted: false });
      expect(await store.admitRate([b], T0 + HOUR + 100)).toEqual({ admitted: true });
    });
  });
}
