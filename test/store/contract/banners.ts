/** The banners port: insert and dedupe, dismissal, listing, the version token, purging. Part of the Store contract (../suite.ts), run on both engines. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { BannerRecord, Store } from '../../../src/store/types.js';
import { FeedCache } from '../../../src/banners/feed.js';
import { banner, HOUR, T0, type StoreHandle } from './fixtures.js';

export function bannersContract(open: () => StoreHandle): void {
  let h: StoreHandle;
  let store: Store;
  beforeEach(() => {
    h = open();
    store = h.store;
  });

  describe('banners', () => {
    it('inserts and reads back every field', async () => {
      const b = banner({ severity: 'critical', dedupe_key: 'deploy', text: 'Déploiement \u26a0' });
      expect(await store.insertBanner(b)).toEqual(b);
      expect(await store.getBanner(b.id)).toEqual(b);
      expect(await store.getBanner('bnr_missing')).toBeNull();
      const forever = banner({ expires_at: null });
      await store.insertBanner(forever);
      expect(await store.getBanner(forever.id)).toEqual(forever);
    });

    it('dedupes only among active banners', async () => {
      const first = banner({ dedupe_key: 'outage' });
      await store.insertBanner(first);
      const second = banner({ dedupe_key: 'outage', created_at: T0 + 10, text: 'other' });
      expect(await store.insertBanner(second)).toEqual(first);
      expect(await store.getBanner(second.id)).toBeNull();
      expect(await store.findActiveBannerByDedupe('all', 'outage', T0 + 10)).toEqual(first);

      // Dismissed: a new one is created.
      await store.dismissBanner(first.id, T0 + 20);
      expect(await store.findActiveBannerByDedupe('all', 'outage', T0 + 21)).toBeNull();
      const third = banner({ dedupe_key: 'outage', created_at: T0 + 30 });
      expect(await store.insertBanner(third)).toEqual(third);

      // Expired: a new one is created too.
      const fourth = banner({ dedupe_key: 'outage', created_at: third.expires_at!, expires_at: third.expires_at! + HOUR });
      expect(await store.insertBanner(fourth)).toEqual(fourth);
      expect(await store.findActiveBannerByDedupe('all', 'outage', third.expires_at!)).toEqual(fourth);
      // Other keys and no key never dedupe.
      expect(await store.insertBanner(banner({ dedupe_key: 'other', created_at: T0 + 40 }))).toMatchObject({ dedupe_key: 'other' });
      const a = banner({ created_at: T0 + 50 });
      const b = banner({ created_at: T0 + 50 });
      expect(await store.insertBanner(a)).toEqual(a);
      expect(await store.insertBanner(b)).toEqual(b);
    });

    it('scopes a dedupe key to its audience: the same key in another audience is another banner', async () => {
      const forAll = banner({ audience: 'all', dedupe_key: 'outage' });
      const forAdmins = banner({ audience: 'admins', dedupe_key: 'outage', created_at: T0 + 1, text: 'admins only' });
      expect(await store.insertBanner(forAll)).toEqual(forAll);
      expect(await store.insertBanner(forAdmins)).toEqual(forAdmins);
      // Each audience dedupes against its own banner only.
      expect(await store.insertBanner(banner({ audience: 'admins', dedupe_key: 'outage', created_at: T0 + 2 }))).toEqual(forAdmins);
      expect(await store.insertBanner(banner({ audience: 'all', dedupe_key: 'outage', created_at: T0 + 2 }))).toEqual(forAll);
      const ids = async (audience: string) =>
        (await store.listBanners({ audiences: [audience], status: 'active', now: T0 + 3 })).map((b) => b.id);
      expect(await ids('admins')).toEqual([forAdmins.id]);
      expect(await ids('all')).toEqual([forAll.id]);
      expect(await store.findActiveBannerByDedupe('admins', 'outage', T0 + 3)).toEqual(forAdmins);
      expect(await store.findActiveBannerByDedupe('team:billing', 'outage', T0 + 3)).toBeNull();
      // Dismissing one audience's banner leaves the other's dedupe in place.
      await store.dismissBanner(forAll.id, T0 + 4);
      expect(await store.insertBanner(banner({ audience: 'admins', dedupe_key: 'outage', created_at: T0 + 5 }))).toEqual(forAdmins);
    });

    it('creates one banner per audience when many insert the same dedupe key at once', async () => {
      const many = Array.from({ length: 20 }, (_, i) => banner({ dedupe_key: 'race-audiences', audience: i % 2 ? 'all' : 'admins' }));
      const results = await Promise.all(many.map((b) => store.insertBanner(b)));
      expect(new Set(results.map((r) => r.id)).size).toBe(2);
      expect(new Set(results.filter((r) => r.audience === 'admins').map((r) => r.id)).size).toBe(1);
      expect(results.every((r, i) => r.audience === many[i]!.audience)).toBe(true);
    });

    it('creates one banner when many insert the same dedupe key at once', async () => {
      const many = Array.from({ length: 20 }, () => banner({ dedupe_key: 'race' }));
      const results = await Promise.all(many.map((b) => store.insertBanner(b)));
      expect(new Set(results.map((r) => r.id)).size).toBe(1);
      expect(await store.listBanners({ now: T0 })).toHaveLength(1);
    });

    it('dismisses idempotently, keeping the first dismissal time', async () => {
      const b = banner();
      await store.insertBanner(b);
      expect(await store.dismissBanner(b.id, T0 + 5)).toEqual({ ...b, dismissed_at: T0 + 5 });
      expect(await store.dismissBanner(b.id, T0 + 9)).toEqual({ ...b, dismissed_at: T0 + 5 });
      expect(await store.dismissBanner('bnr_unknown', T0)).toBeNull();
    });

    it('lists by exact audience and by status, newest first', async () => {
      const all1 = banner({ audience: 'all', created_at: T0 });
      const admins = banner({ audience: 'admins', created_at: T0 + 1 });
      const billing = banner({ audience: 'team:billing', created_at: T0 + 2, expires_at: T0 + 100 });
      const dismissed = banner({ audience: 'all', created_at: T0 + 3 });
      const all2 = banner({ audience: 'all', created_at: T0 + 4, expires_at: null });
      for (const b of [all1, admins, billing, dismissed, all2]) await store.insertBanner(b);
      await store.dismissBanner(dismissed.id, T0 + 5);
      const now = T0 + 100; // billing has just expired

      const ids = (bs: BannerRecord[]) => bs.map((b) => b.id);
      expect(ids(await store.listBanners({ now }))).toEqual([all2.id, dismissed.id, billing.id, admins.id, all1.id]);
      expect(ids(await store.listBanners({ now, status: 'active' }))).toEqual([all2.id, admins.id, all1.id]);
      expect(ids(await store.listBanners({ now, status: 'dismissed' }))).toEqual([dismissed.id]);
      expect(ids(await store.listBanners({ now, status: 'expired' }))).toEqual([billing.id]);
      expect(ids(await store.listBanners({ now, audiences: ['all'], status: 'active' }))).toEqual([all2.id, all1.id]);
      // `all` is a segment, not a wildcard; the viewer passes every segment it belongs to.
      expect(ids(await store.listBanners({ now, audiences: ['admins'], status: 'active' }))).toEqual([admins.id]);
      expect(ids(await store.listBanners({ now, audiences: ['all', 'admins'], status: 'active' }))).toEqual([all2.id, admins.id, all1.id]);
      expect(ids(await store.listBanners({ now: T0 + 99, audiences: ['team:billing'], status: 'active' }))).toEqual([billing.id]);
      expect(ids(await store.listBanners({ now, audiences: ['team'] }))).toEqual([]);
      expect(ids(await store.listBanners({ now, audiences: [] }))).toEqual([]);
      expect(ids(await store.listBanners({ now, limit: 2 }))).toEqual([all2.id, dismissed.id]);
    });

    it('purges banners dismissed or expired before the cut-off, and nothing else', async () => {
      const oldDismissed = banner({ created_at: T0 });
      const oldExpired = banner({ created_at: T0, expires_at: T0 + 10 });
      const recentExpired = banner({ created_at: T0, expires_at: T0 + 1000 });
      const active = banner({ created_at: T0, expires_at: null });
      for (const b of [oldDismissed, oldExpired, recentExpired, active]) await store.insertBanner(b);
      await store.dismissBanner(oldDismissed.id, T0 + 5);
      expect(await store.purgeBanners(T0 + 500)).toBe(2);
      expect((await store.listBanners({ now: T0 + 2000 })).map((b) => b.id).sort()).toEqual([recentExpired.id, active.id].sort());
    });

    it('lists several audiences newest first, ties by insertion order reversed, across audiences and limits', async () => {
      // Deterministic pseudo-random data with many created_at ties, compared with a
      // reference computed here from the inserted records (insertion order = seq).
      let x = 42;
      const rnd = (n: number) => ((x = (x * 1103515245 + 12345) % 2 ** 31), x % n);
      const audiences = ['all', 'admins', 'team:a', 'team:b'];
      const inserted: BannerRecord[] = [];
      for (let i = 0; i < 120; i++) {
        const b = banner({
          audience: audiences[rnd(4)]!,
          created_at: T0 + rnd(15),
          expires_at: rnd(4) === 0 ? null : T0 + 50 + rnd(100),
        });
        await store.insertBanner(b);
        inserted.push(b);
      }
      for (const b of inserted) {
        if (rnd(3) === 0) {
          await store.dismissBanner(b.id, T0 + 60);
          b.dismissed_at = T0 + 60;
        }
      }
      const seq = new Map(inserted.map((b, i) => [b.id, i]));
      const now = T0 + 100;
      const status = (b: BannerRecord) =>
        b.dismissed_at !== null ? 'dismissed' : b.expires_at !== null && b.expires_at <= now ? 'expired' : 'active';
      const cases: { audiences: string[]; status?: 'active' | 'dismissed' | 'expired'; limit?: number }[] = [
        { audiences: ['all', 'admins'], status: 'active', limit: 10 },
        { audiences: ['admins', 'all', 'team:a'], status: 'active', limit: 7 },
        { audiences: ['all', 'admins', 'team:a', 'team:b'], status: 'active' },
        { audiences: ['all', 'all', 'team:b'], status: 'active', limit: 5 },
        { audiences: ['team:b', 'nobody'], status: 'dismissed', limit: 4 },
        { audiences: ['all', 'team:a'], status: 'expired' },
        { audiences: ['all', 'admins'], limit: 12 },
        { audiences: ['admins'] },
        { audiences: ['all', 'admins'], status: 'active', limit: 0 },
        // Longer than one SQLite statement's worth of audiences (read in chunks, merged).
        { audiences: [...Array.from({ length: 18 }, (_, i) => `x${i}`), 'team:b', 'all', 'admins'], status: 'active', limit: 9 },
        { audiences: [...Array.from({ length: 40 }, (_, i) => `x${i}`), 'team:a', 'all'] },
      ];
      for (const c of cases) {
        const expected = inserted
          .filter((b) => c.audiences.includes(b.audience) && (c.status === undefined || status(b) === c.status))
          .sort((a, b) => b.created_at - a.created_at || seq.get(b.id)! - seq.get(a.id)!)
          .slice(0, c.limit ?? Infinity);
        expect(await store.listBanners({ now, ...c }), JSON.stringify(c)).toEqual(expected);
      }
    });

    it('bannersVersion changes on every insert, dismissal and purge, and is shared with other stores', async () => {
      const other = await h.reopen();
      try {
        const seen = new Set<string>();
        const fresh = async () => {
          const v = await store.bannersVersion();
          expect(typeof v).toBe('string');
          expect(seen.has(v), `version ${v} seen before`).toBe(false);
          seen.add(v);
          expect(await other.bannersVersion()).toBe(v);
          return v;
        };
        let v = await fresh();
        // Reads and no-op writes leave it alone.
        await store.listBanners({ now: T0 });
        await store.getBanner('bnr_none');
        await store.dismissBanner('bnr_none', T0);
        expect(await store.bannersVersion()).toBe(v);

        const a = banner({ expires_at: T0 + 10 });
        await store.insertBanner(a);
        v = await fresh();
        // A dedupe hit inserts nothing.
        const keyed = banner({ dedupe_key: 'k' });
        await other.insertBanner(keyed);
        v = await fresh();
        await store.insertBanner(banner({ dedupe_key: 'k' }));
        expect(await store.bannersVersion()).toBe(v);

        await other.dismissBanner(keyed.id, T0 + 1);
        v = await fresh();
        await other.dismissBanner(keyed.id, T0 + 2); // already dismissed
        expect(await store.bannersVersion()).toBe(v);

        expect(await store.purgeBanners(T0 + 5)).toBe(1); // the dismissed one
        v = await fresh();
        expect(await store.purgeBanners(T0 + 5)).toBe(0);
        expect(await store.bannersVersion()).toBe(v);
        expect(await other.purgeBanners(T0 + 20)).toBe(1); // the expired one
        await fresh();
      } finally {
        await other.close();
      }
    });

    it("a process's feed cache sees another store's insert, dismissal and purge on the next read", async () => {
      const other = await h.reopen();
      try {
        const cache = new FeedCache(store);
        const feedIds = async (now: number) =>
          (
            JSON.parse((await cache.render(['all', 'admins'], now)).body.toString('utf8')) as { banners: { banner_id: string }[] }
          ).banners.map((b) => b.banner_id);
        const a = banner({ created_at: T0 - 2, expires_at: T0 + 10 });
        await store.insertBanner(a);
        expect(await feedIds(T0)).toEqual([a.id]);
        const b = banner({ audience: 'admins', created_at: T0 - 1, expires_at: null });
        await other.insertBanner(b);
        expect(await feedIds(T0)).toEqual([b.id, a.id]);
        await other.dismissBanner(b.id, T0);
        expect(await feedIds(T0)).toEqual([a.id]);
        expect(await feedIds(T0 + 10)).toEqual([]); // a expired: no write, the cache knows
        expect(await other.purgeBanners(T0 + 20)).toBe(2);
        const c = banner({ created_at: T0 + 20, expires_at: null });
        await other.insertBanner(c);
        expect(await feedIds(T0 + 20)).toEqual([c.id]);
      } finally {
        await other.close();
      }
    });

    it('survives reopening (migrations are re-run as no-ops)', async () => {
      const b = banner();
      await store.insertBanner(b);
      const again = await h.reopen();
      try {
        expect(await again.getBanner(b.id)).toEqual(b);
      } finally {
        await again.close();
      }
    });
  });
}
