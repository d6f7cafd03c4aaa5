/**
 * BannerHub over a real SQLite store, polled by hand: one read per segment however many
 * subscribers; Last-Event-ID resumes only when every missed event is still held and the
 * segment was followed all along, else a snapshot; a failed read loses no change; a banner
 * reaching its expiry is reported though nothing was written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { bannerRecord } from '../../test/helpers/banner-record.js';
import { silentLogger } from '../core/log.js';
import { openSqliteStore, type SqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/types.js';
import type { FeedBanner } from './feed.js';
import { FeedFullError, FeedShareError } from './feed-errors.js';
import { feedClientKey } from './feed-client.js';
import type { BannerEvent, FeedSink } from './feed-events.js';
import { BannerHub } from './hub.js';

const T0 = Date.UTC(2026, 5, 1, 12);
let clock = T0;
let dir: string;
let store: SqliteStore;
let lists = 0;
let failLists = 0;
/** `store` with listBanners counted, and failing while failLists > 0. */
let watched: Store;

beforeEach(async () => {
  clock = T0;
  lists = 0;
  failLists = 0;
  dir = mkdtempSync(join(tmpdir(), 'notify-hub-'));
  store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
  watched = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'listBanners')
        return (q: Parameters<Store['listBanners']>[0]) => {
          lists++;
          if (failLists > 0 && failLists--) return Promise.reject(new Error('database is locked'));
          return target.listBanners(q);
        };
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

class Recorder implements FeedSink {
  snapshots: { banners: FeedBanner[]; cursor: string }[] = [];
  events: BannerEvent[] = [];
  snapshot(banners: FeedBanner[], cursor: string) {
    this.snapshots.push({ banners, cursor });
  }
  event(e: BannerEvent) {
    this.events.push(e);
  }
  get last(): string {
    return this.events.at(-1)?.cursor ?? this.snapshots.at(-1)!.cursor;
  }
}

const hubOf = (opts: ConstructorParameters<typeof BannerHub>[1] = {}) =>
  new BannerHub(watched, { pollMs: 60_000, now: () => clock, ...opts });

describe('BannerHub', () => {
  it('reads each followed segment once per change, however many subscribers, and only when the store changed', async () => {
    const hub = hubOf();
    const subs = Array.from({ length: 20 }, () => new Recorder());
    for (const s of subs) await hub.subscribe(['all'], s);
    expect(lists).toBe(1);
    await hub.poll(); // first poll learns the version
    lists = 0;
    await hub.poll();
    expect(lists).toBe(0); // nothing changed: the counter alone
    const b = await store.insertBanner(bannerRecord(clock));
    await hub.poll();
    expect(lists).toBe(1);
    for (const s of subs) expect(s.events.map((e) => [e.change, e.banner.banner_id])).toEqual([['shown', b.id]]);
    hub.close();
  });

  it('resumes after a cursor it still holds, and sends a snapshot when events were dropped or the segment was not followed', async () => {
    const hub = hubOf({ replayEvents: 3 });
    const first = new Recorder();
    const end = await hub.subscribe(['all'], first);
    await hub.poll();
    const a = await store.insertBanner(bannerRecord(clock, { text: 'a' }));
    await hub.poll();
    const cursor = first.last;
    end();
    const b = await store.insertBanner(bannerRecord(clock, { text: 'b' }));
    await hub.poll();

    const resumed = new Recorder();
    await hub.subscribe(['all'], resumed, cursor);
    expect(resumed.snapshots).toEqual([]);
    expect(resumed.events.map((e) => e.banner.banner_id)).toEqual([b.id]);

    // A segment this cursor's reader could not have followed: snapshot.
    const wider = new Recorder();
    await hub.subscribe(['all', 'admins'], wider, cursor);
    expect(wider.snapshots).toHaveLength(1);

    // More changes than the hub keeps: snapshot, with both banners.
    for (let i = 0; i < 2; i++) {
      const x = await store.insertBanner(bannerRecord(clock));
      await hub.poll();
      await store.dismissBanner(x.id, clock);
      await hub.poll();
    }
    const late = new Recorder();
    await hub.subscribe(['all'], late, cursor);
    expect(late.events).toEqual([]);
    expect(late.snapshots[0]!.banners.map((x) => x.banner_id).sort()).toEqual([a.id, b.id].sort());
    hub.close();
  });

  it('loses no change when a read fails: the next poll reads again', async () => {
    const hub = hubOf();
    const sub = new Recorder();
    await hub.subscribe(['all'], sub);
    await hub.poll();
    const b = await store.insertBanner(bannerRecord(clock));
    failLists = 1;
    await expect(hub.poll()).rejects.toThrow(/locked/);
    expect(sub.events).toEqual([]);
    await hub.poll();
    expect(sub.events.map((e) => [e.change, e.banner.banner_id])).toEqual([['shown', b.id]]);
    hub.close();
  });

  it('reports a banner reaching its expires_at, which writes nothing, as expired', async () => {
    const hub = hubOf();
    const b = await store.insertBanner(bannerRecord(clock, { expires_at: clock + 1_000 }));
    const sub = new Recorder();
    await hub.subscribe(['all'], sub);
    await hub.poll();
    expect(sub.snapshots[0]!.banners.map((x) => x.banner_id)).toEqual([b.id]);
    clock += 999;
    await hub.poll();
    expect(sub.events).toEqual([]);
    clock += 1;
    await hub.poll();
    expect(sub.events.map((e) => [e.change, e.banner.banner_id])).toEqual([['expired', b.id]]);
    hub.close();
  });

  // DESIGN 2's bound for a change from any process sharing the store, on the hub's own timer
  // rather than a wall clock a loaded machine stretches: the stream tests show only that events arrive.
  it("polls by itself, by default often enough that another process's write and an expiry reach a subscriber within 1 s", async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const hub = hubOf({ pollMs: undefined });
      const sub = new Recorder();
      await hub.subscribe(['all'], sub);
      await vi.advanceTimersByTimeAsync(1_000);
      // Written behind the hub's back, as another process sharing the store writes.
      const b = await store.insertBanner(bannerRecord(clock, { expires_at: clock + 5_000 }));
      await vi.advanceTimersByTimeAsync(1_000);
      expect(sub.events.map((e) => [e.change, e.banner.banner_id])).toEqual([['shown', b.id]]);
      clock += 5_000;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(sub.events.map((e) => [e.change, e.banner.banner_id])).toEqual([
        ['shown', b.id],
        ['expired', b.id],
      ]);
      hub.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('tracks at most maxSegments segments: lingering ones make room, followed ones refuse a new follower of others', async () => {
    // 20 streams naming 1,500 distinct segments each made every change 30,000 store reads.
    const hub = hubOf({ maxSegments: 3 });
    const endA = await hub.subscribe(['a', 'b'], new Recorder());
    await hub.subscribe(['c'], new Recorder());
    expect(hub.hasRoomFor(['d'])).toBe(false);
    await expect(hub.subscribe(['a', 'd'], new Recorder())).rejects.toBeInstanceOf(FeedFullError);
    // Segments already tracked need no room.
    expect(hub.hasRoomFor(['a', 'b', 'c'])).toBe(true);
    await hub.subscribe(['a', 'c'], new Recorder());
    endA(); // b lingers, followed by no one: forgotten to make room for d
    expect(hub.hasRoomFor(['d'])).toBe(true);
    const d = new Recorder();
    await hub.subscribe(['d'], d);
    expect(d.snapshots).toHaveLength(1);
    await expect(hub.subscribe(['e'], new Recorder())).rejects.toBeInstanceOf(FeedFullError);
    hub.close();
  });

  it('resumes a cursor issued for other segments with a snapshot, even when another reader kept them followed', async () => {
    const hub = hubOf();
    await hub.subscribe(['admins'], new Recorder()); // keeps admins followed all along
    const failover = await store.insertBanner(bannerRecord(clock, { audience: 'admins', severity: 'critical', text: 'failover' }));
    await hub.poll();
    const narrow = new Recorder();
    const end = await hub.subscribe(['all'], narrow);
    const cursor = narrow.last;
    end();

    const wider = new Recorder();
    await hub.subscribe(['all', 'admins'], wider, cursor);
    expect(wider.events).toEqual([]);
    expect(wider.snapshots.map((x) => x.banners.map((b) => b.banner_id))).toEqual([[failover.id]]);
    // Its own cursors resume it: the same segments, in any order.
    const again = new Recorder();
    await hub.subscribe(['admins', 'all'], again, wider.last);
    expect(again.snapshots).toEqual([]);
    hub.close();
  });

  it('replays on resume only the events of the segments the stream follows', async () => {
    const hub = hubOf();
    await hub.subscribe(['admins'], new Recorder()); // another reader's segment, with events in the log
    const reader = new Recorder();
    const end = await hub.subscribe(['all'], reader);
    await hub.poll();
    const cursor = reader.last;
    end();
    const theirs = await store.insertBanner(bannerRecord(clock, { audience: 'admins', text: 'admins only' }));
    const ours = await store.insertBanner(bannerRecord(clock, { audience: 'all', text: 'everyone' }));
    await hub.poll();
    await store.dismissBanner(theirs.id, clock);
    await hub.poll();

    const resumed = new Recorder();
    await hub.subscribe(['all'], resumed, cursor);
    expect(resumed.snapshots).toEqual([]);
    expect(resumed.events.map((e) => [e.change, e.banner.banner_id, e.banner.audience])).toEqual([['shown', ours.id, 'all']]);
    hub.close();
  });

  it("gives each client its own share of segments: one client's fill refuses it, not the others", async () => {
    const hub = hubOf({ maxSegments: 10, segmentsPerClient: 4 });
    const hog = 'address:192.0.2.7';
    const ends: (() => void)[] = [];
    ends.push(await hub.subscribe(['h1', 'h2'], new Recorder(), undefined, hog));
    ends.push(await hub.subscribe(['h2', 'h3', 'h4'], new Recorder(), undefined, hog)); // h2 again costs nothing
    await expect(hub.subscribe(['h5'], new Recorder(), undefined, hog)).rejects.toBeInstanceOf(FeedShareError);
    expect(() => hub.claim(hog, ['h5'])).toThrow(FeedShareError);
    expect(hub.refusalFor(['h5'], hog)?.code).toBe('FEED_CLIENT_LIMIT');
    // Another client is admitted, to the hub's total.
    const viewer = new Recorder();
    await hub.subscribe(['all', 'h1'], viewer, undefined, 'token:web');
    expect(viewer.snapshots).toHaveLength(1);
    await hub.subscribe(['v1', 'v2', 'v3'], new Recorder(), undefined, 'address:198.51.100.1');
    await hub.subscribe(['w1', 'w2'], new Recorder(), undefined, 'address:198.51.100.2');
    // 10 claimed (h1-h4, all, v1-v3, w1-w2): the hub is full for everyone.
    await expect(hub.subscribe(['x'], new Recorder(), undefined, 'address:198.51.100.3')).rejects.toBeInstanceOf(FeedFullError);
    // A refused subscribe claims nothing: the hog's streams end and its share comes back.
    for (const end of ends) end();
    await hub.subscribe(['x', 'h5'], new Recorder(), undefined, 'address:198.51.100.3');
    await hub.subscribe(['h6'], new Recorder(), undefined, hog);
    hub.close();
  });

  it('names a client by token, else by address (IPv4-mapped as IPv4, IPv6 by its /64)', () => {
    expect(feedClientKey('web', '10.0.0.1')).toBe('token:web');
    expect(feedClientKey(undefined, '10.0.0.1')).toBe(feedClientKey(undefined, '::ffff:10.0.0.1'));
    expect(feedClientKey(undefined, '10.0.0.1')).not.toBe(feedClientKey(undefined, '10.0.0.2'));
    expect(feedClientKey(undefined, '2001:db8:1:2::5')).toBe(feedClientKey(undefined, '2001:0db8:0001:0002:ffff:1:2:3'));
    expect(feedClientKey(undefined, '2001:db8:1:2::5')).not.toBe(feedClientKey(undefined, '2001:db8:1:3::5'));
    expect(feedClientKey('web', undefined)).not.toBe(feedClientKey(undefined, 'web'));
  });

  it('lets the event loop turn while it reads many segments (SQLite reads are synchronous)', async () => {
    const hub = hubOf();
    for (let i = 0; i < 200; i++) await hub.subscribe([`s${i}`], new Recorder());
    await hub.poll();
    await store.insertBanner(bannerRecord(clock));
    let turned = false;
    setImmediate(() => (turned = true));
    await hub.poll();
    expect(turned).toBe(true);
    hub.close();
  });
});
