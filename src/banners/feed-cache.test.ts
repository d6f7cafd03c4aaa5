/**
 * FeedCache: a hit costs one bannersVersion() and no listBanners(); every write (here or
 * through another store on the same file), a held banner's expiry and a clock stepping
 * back each force a re-read; the cache holds at most its bound, dropping the least
 * recently used.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../core/log.js';
import { openSqliteStore, type SqliteStore } from '../store/sqlite/store.js';
import type { BannerRecord, Store } from '../store/types.js';
import { activeBanners, FEED_LIMIT, FeedCache, feedCacheFor } from './feed.js';
import { bannerRecord } from '../../test/helpers/banner-record.js';

const T0 = Date.UTC(2026, 5, 1, 12);
const HOUR = 3_600_000;

let dir: string;
let store: SqliteStore;
let other: SqliteStore;
/** `store` with its listBanners calls counted. */
let counted: Store;
let lists: number;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'notify-feed-cache-'));
  store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
  other = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
  lists = 0;
  counted = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'listBanners') return (q: Parameters<Store['listBanners']>[0]) => (lists++, target.listBanners(q));
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
});
afterEach(async () => {
  await store.close();
  await other.close();
  rmSync(dir, { recursive: true, force: true });
});

const banner = (extra: Partial<BannerRecord> = {}) => bannerRecord(T0, extra);

const parse = (body: Buffer) => JSON.parse(body.toString('utf8')) as { audience: string[]; banners: { banner_id: string }[] };
const ids = (body: Buffer) => parse(body).banners.map((b) => b.banner_id);

describe('FeedCache', () => {
  it('renders exactly what activeBanners answers, and serves repeats from memory', async () => {
    const a = banner({ severity: 'warning', created_at: T0 - 2 });
    const b = banner({ audience: 'admins', severity: 'critical', created_at: T0 - 1, text: 'Déploiement ⚠' });
    for (const x of [a, b]) await store.insertBanner(x);
    const cache = new FeedCache(counted);
    const first = await cache.render(['all', 'admins'], T0);
    expect(first.body.toString('utf8')).toBe(
      JSON.stringify({ audience: ['all', 'admins'], banners: await activeBanners(store, ['all', 'admins'], T0) }),
    );
    expect(first.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(lists).toBe(1);
    const again = await cache.render(['all', 'admins'], T0 + 1000);
    expect(again.body).toBe(first.body);
    expect(lists).toBe(1);
    // Another order is another body (the audience list is echoed), so another entry.
    expect(parse((await cache.render(['admins', 'all'], T0)).body).audience).toEqual(['admins', 'all']);
    expect(lists).toBe(2);
    // No audiences: no store call at all.
    expect(parse((await cache.render([], T0)).body)).toEqual({ audience: [], banners: [] });
    expect(lists).toBe(2);
  });

  it('re-reads after an insert, a dismissal and a purge made by another process on the same file', async () => {
    const cache = new FeedCache(counted);
    const keep = banner({ created_at: T0 - 10, expires_at: null });
    await store.insertBanner(keep);
    expect(ids((await cache.render(['all'], T0)).body)).toEqual([keep.id]);

    const added = banner({ created_at: T0 - 5 });
    await other.insertBanner(added);
    const afterInsert = await cache.render(['all'], T0);
    expect(ids(afterInsert.body)).toEqual([added.id, keep.id]);

    await other.dismissBanner(added.id, T0);
    const afterDismiss = await cache.render(['all'], T0);
    expect(ids(afterDismiss.body)).toEqual([keep.id]);
    expect(afterDismiss.etag).not.toBe(afterInsert.etag);

    const n = lists;
    expect(await other.purgeBanners(T0 + 1)).toBe(1);
    await cache.render(['all'], T0 + 2);
    expect(lists).toBe(n + 1); // same answer, but read again: the version moved
    await cache.render(['all'], T0 + 3);
    expect(lists).toBe(n + 1);
  });

  it('drops a held banner at its expires_at, letting the next one in, with no write at all', async () => {
    // FEED_LIMIT + 1 banners; the newest expires first.
    const all = Array.from({ length: FEED_LIMIT + 1 }, (_, i) =>
      banner({ created_at: T0 - 1000 + i, expires_at: i === FEED_LIMIT ? T0 + 100 : T0 + HOUR }),
    );
    for (const b of all) await store.insertBanner(b);
    const cache = new FeedCache(counted);
    const before = ids((await cache.render(['all'], T0)).body);
    expect(before).toHaveLength(FEED_LIMIT);
    expect(before[0]).toBe(all[FEED_LIMIT]!.id);
    expect(ids((await cache.render(['all'], T0 + 99)).body)).toEqual(before);
    expect(lists).toBe(1);
    const after = ids((await cache.render(['all'], T0 + 100)).body);
    expect(after).toEqual(
      all
        .slice(0, FEED_LIMIT)
        .reverse()
        .map((b) => b.id),
    );
    expect(lists).toBe(2);
  });

  it('re-reads when the clock steps back behind the fill', async () => {
    const b = banner({ expires_at: T0 + 50 });
    await store.insertBanner(b);
    const cache = new FeedCache(counted);
    expect(ids((await cache.render(['all'], T0 + 60)).body)).toEqual([]);
    expect(ids((await cache.render(['all'], T0 + 40)).body)).toEqual([b.id]);
    expect(lists).toBe(2);
  });

  it('holds at most its bound, dropping the least recently used', async () => {
    await store.insertBanner(banner());
    const cache = new FeedCache(counted, 3);
    for (const a of ['s1', 's2', 's3']) await cache.render([a], T0);
    await cache.render(['s1'], T0); // s1 is now the most recent; s2 the least
    await cache.render(['s4'], T0); // evicts s2
    expect(cache.size).toBe(3);
    expect(lists).toBe(4);
    await cache.render(['s1'], T0);
    await cache.render(['s3'], T0);
    await cache.render(['s4'], T0);
    expect(lists).toBe(4);
    await cache.render(['s2'], T0);
    expect(lists).toBe(5);
  });

  it('shares version reads among concurrent requests, but never one that started before the request', async () => {
    await store.insertBanner(banner({ created_at: T0 - 10 }));
    // bannersVersion reads the store when called and answers when the gate opens, like a
    // round trip to PostgreSQL whose snapshot was taken at its start.
    let reads = 0;
    let open: () => void = () => {};
    let gate = Promise.resolve();
    const slow: Store = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'bannersVersion')
          return async () => {
            reads++;
            const v = await target.bannersVersion();
            await gate;
            return v;
          };
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const cache = new FeedCache(slow);
    await cache.render(['all'], T0);
    expect(reads).toBe(1);

    gate = new Promise((r) => (open = r));
    const early = cache.render(['all'], T0); // its read starts now, before the write
    const added = banner({ created_at: T0 - 1 });
    await other.insertBanner(added);
    const late = Array.from({ length: 10 }, () => cache.render(['all'], T0)); // after the write
    await Promise.resolve();
    open();
    expect(ids((await early).body)).toHaveLength(1);
    for (const r of await Promise.all(late)) expect(ids(r.body)[0]).toBe(added.id);
    expect(reads).toBe(3); // the first, the early one, and one shared by the ten late ones
  });

  it('is one cache per store', () => {
    expect(feedCacheFor(store)).toBe(feedCacheFor(store));
    expect(feedCacheFor(other)).not.toBe(feedCacheFor(store));
  });
});
