import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/config.js';
import { NotifyError } from '../../core/errors.js';
import { silentLogger } from '../../core/log.js';
import { openSqliteStore, type SqliteStore } from '../../store/sqlite/store.js';
import { AskFirst, type ObjectToolSpec, type ToolContext } from '../tool-kit.js';
import { errorResult } from '../tool-result.js';
import { activeBanners, parseAudienceParam } from '../../banners/feed.js';
import { dismissBanner } from './dismiss-banner.js';
import { bannerTools } from './index.js';
import { listBanners } from './list-banners.js';
import { showBanner } from './show-banner.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 5, 1, 12);

let dir: string;
let store: SqliteStore;
let clock: number;
let ctx: ToolContext;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'notify-banners-'));
  store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
  clock = T0;
  const config = loadConfig({ NOTIFY_DATA_DIR: dir });
  const now = () => clock;
  ctx = {
    store,
    config,
    log: silentLogger,
    client: 'test',
    now,
    signal: new AbortController().signal,
    deps: { config, store, channels: [], log: silentLogger, now },
  };
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Parses like the server does (strict zod), then runs the handler. */
async function call<S extends ObjectToolSpec>(spec: S, args: unknown): Promise<Record<string, unknown>> {
  const answer = await spec.handler(spec.input.parse(args), ctx);
  if (answer instanceof AskFirst) throw new Error(`${spec.name} asked a person`);
  return answer;
}

async function failure(p: Promise<unknown>): Promise<NotifyError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NotifyError);
  return err as NotifyError;
}

describe('banner tools', () => {
  it('are show, dismiss, list in that order, with truthful annotations', () => {
    expect(bannerTools.map((t) => t.name)).toEqual(['show_banner', 'dismiss_banner', 'list_banners']);
    expect(showBanner.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
    expect(dismissBanner.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
    expect(listBanners.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(listBanners.description).toMatch(/30 days/);
    expect(showBanner.description).toMatch(/not a wildcard/);
  });

  it('reject unknown fields (strict inputs) and bad audiences', () => {
    expect(showBanner.input.safeParse({ text: 'x', audience: 'all', color: 'red' }).success).toBe(false);
    expect(dismissBanner.input.safeParse({ banner_id: 'bnr_x', force: true }).success).toBe(false);
    expect(listBanners.input.safeParse({ limit: 3 }).success).toBe(false);
    for (const bad of ['All', '', ':admins', 'a b', 'x'.repeat(65), 'team/billing']) {
      expect(showBanner.input.safeParse({ text: 'x', audience: bad }).success, bad).toBe(false);
    }
    for (const good of ['all', 'admins', 'team:billing', 'x'.repeat(64), '0-day_ops']) {
      expect(showBanner.input.safeParse({ text: 'x', audience: good }).success, good).toBe(true);
    }
    expect(showBanner.input.safeParse({ text: 'x', audience: 'all', expires_at: 'tomorrow' }).success).toBe(false);
    expect(showBanner.input.safeParse({ text: 'x', audience: 'all', severity: 'urgent' }).success).toBe(false);
  });

  describe('show_banner', () => {
    it('creates an active bnr_<uuid> banner with info severity and a 7-day default expiry', async () => {
      const r = await call(showBanner, { text: 'Maintenance at 22:00', audience: 'all' });
      expect(r).toEqual({
        banner_id: expect.stringMatching(/^bnr_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        status: 'active',
        expires_at: new Date(T0 + 7 * DAY).toISOString(),
        deduplicated: false,
      });
      expect(await store.getBanner(r.banner_id as string)).toMatchObject({ severity: 'info', audience: 'all', created_at: T0 });
    });

    it('takes an explicit expiry in the future, with an offset, up to 90 days', async () => {
      const r = await call(showBanner, { text: 't', audience: 'admins', severity: 'critical', expires_at: '2026-06-01T14:30:00+02:00' });
      expect(r.expires_at).toBe('2026-06-01T12:30:00.000Z');
      const max = await call(showBanner, { text: 't', audience: 'admins', expires_at: new Date(T0 + 90 * DAY).toISOString() });
      expect(max.status).toBe('active');
    });

    it('rejects a past or present expires_at, and one beyond 90 days, as INVALID_FIELD at /expires_at', async () => {
      for (const at of [new Date(T0 - 1000).toISOString(), new Date(T0).toISOString()]) {
        const err = await failure(call(showBanner, { text: 't', audience: 'all', expires_at: at }));
        expect(err.toBody()).toMatchObject({ code: 'INVALID_FIELD', path: '/expires_at' });
        expect(err.message).toMatch(/not in the future/);
      }
      const far = await failure(call(showBanner, { text: 't', audience: 'all', expires_at: new Date(T0 + 90 * DAY + 1000).toISOString() }));
      expect(far.toBody()).toMatchObject({ code: 'INVALID_FIELD', path: '/expires_at' });
      expect(far.message).toMatch(/90 days/);
      expect(await store.listBanners({ now: T0 })).toEqual([]);
    });

    it('returns the active banner with the same dedupe_key instead of a second one, and only while it is active', async () => {
      const a = await call(showBanner, { text: 'Deploy running', audience: 'all', dedupe_key: 'deploy-42' });
      clock += 1000;
      const b = await call(showBanner, { text: 'Deploy running (again)', audience: 'all', dedupe_key: 'deploy-42' });
      expect(b).toEqual({ ...a, deduplicated: true });
      expect(await store.listBanners({ now: clock })).toHaveLength(1);

      await call(dismissBanner, { banner_id: a.banner_id });
      const c = await call(showBanner, {
        text: 'Deploy running',
        audience: 'all',
        dedupe_key: 'deploy-42',
        expires_at: new Date(clock + 60_000).toISOString(),
      });
      expect(c.banner_id).not.toBe(a.banner_id);
      expect(c.deduplicated).toBe(false);

      clock += 60_000; // c expires
      const d = await call(showBanner, { text: 'Deploy running', audience: 'all', dedupe_key: 'deploy-42' });
      expect(d.banner_id).not.toBe(c.banner_id);
      expect(d.deduplicated).toBe(false);
    });

    it('scopes dedupe_key to the audience: another audience gets its own banner', async () => {
      const all = await call(showBanner, { text: 'Deploy running', audience: 'all', dedupe_key: 'deploy-42' });
      const admins = await call(showBanner, { text: 'Deploy running: check the logs', audience: 'admins', dedupe_key: 'deploy-42' });
      expect(admins.deduplicated).toBe(false);
      expect(admins.banner_id).not.toBe(all.banner_id);
      expect(await activeBanners(store, ['admins'], clock)).toEqual([
        expect.objectContaining({ banner_id: admins.banner_id, audience: 'admins' }),
      ]);
      expect(await call(showBanner, { text: 'again', audience: 'admins', dedupe_key: 'deploy-42' })).toEqual({
        ...admins,
        deduplicated: true,
      });
    });

    it('purges banners 30 days after they were dismissed or expired, on write', async () => {
      const dismissed = await call(showBanner, { text: 'old', audience: 'all' });
      await call(dismissBanner, { banner_id: dismissed.banner_id });
      const expired = await call(showBanner, { text: 'short', audience: 'all', expires_at: new Date(T0 + DAY).toISOString() });
      const live = await call(showBanner, { text: 'long', audience: 'all', expires_at: new Date(T0 + 60 * DAY).toISOString() });

      clock = T0 + 30 * DAY + 1000; // dismissed ended 30 days ago; expired ended 29 days ago
      await call(showBanner, { text: 'new', audience: 'ops' });
      expect(await store.getBanner(dismissed.banner_id as string)).toBeNull();
      expect(await store.getBanner(expired.banner_id as string)).not.toBeNull();

      clock = T0 + 31 * DAY + 1000;
      await call(showBanner, { text: 'newer', audience: 'ops' });
      expect(await store.getBanner(expired.banner_id as string)).toBeNull();
      expect(await store.getBanner(live.banner_id as string)).not.toBeNull();
      // Reading never purges.
      clock = T0 + 365 * DAY;
      await call(listBanners, {});
      expect(await store.getBanner(live.banner_id as string)).not.toBeNull();
    });
  });

  describe('dismiss_banner', () => {
    it('is idempotent', async () => {
      const { banner_id } = await call(showBanner, { text: 't', audience: 'all' });
      clock += 5000;
      expect(await call(dismissBanner, { banner_id })).toEqual({
        banner_id,
        status: 'dismissed',
        already_dismissed: false,
        dismissed_at: new Date(T0 + 5000).toISOString(),
      });
      clock += 5000;
      expect(await call(dismissBanner, { banner_id })).toEqual({
        banner_id,
        status: 'dismissed',
        already_dismissed: true,
        dismissed_at: new Date(T0 + 5000).toISOString(),
      });
      // Still "already dismissed" after the time it would have expired.
      clock += 8 * DAY;
      expect(await call(dismissBanner, { banner_id })).toMatchObject({ already_dismissed: true });
    });

    it('says NOT_FOUND for an unknown id and, differently, for an expired banner', async () => {
      const unknown = await failure(call(dismissBanner, { banner_id: 'bnr_00000000-0000-4000-8000-000000000000' }));
      expect(unknown.toBody()).toMatchObject({ code: 'NOT_FOUND', path: '/banner_id' });
      expect(unknown.message).toMatch(/No banner has id bnr_00000000/);

      const { banner_id } = await call(showBanner, { text: 't', audience: 'all', expires_at: new Date(T0 + 1000).toISOString() });
      clock += 1000;
      const expired = await failure(call(dismissBanner, { banner_id }));
      expect(expired.toBody()).toMatchObject({ code: 'NOT_FOUND', path: '/banner_id' });
      expect(expired.message).toMatch(/expired at 2026-06-01T12:00:01.000Z/);
      expect((await store.getBanner(banner_id as string))?.dismissed_at).toBeNull();
    });
  });

  describe('list_banners', () => {
    it('lists by exact audience and status, newest first, with ISO times', async () => {
      const all = await call(showBanner, { text: 'for all', audience: 'all' });
      clock += 1;
      const admins = await call(showBanner, { text: 'for admins', audience: 'admins', severity: 'warning' });
      clock += 1;
      const gone = await call(showBanner, { text: 'gone', audience: 'admins' });
      await call(dismissBanner, { banner_id: gone.banner_id });
      clock += 1;

      const everything = await call(listBanners, {});
      expect((everything.banners as { banner_id: string }[]).map((b) => b.banner_id)).toEqual([
        gone.banner_id,
        admins.banner_id,
        all.banner_id,
      ]);
      expect(everything).toMatchObject({ count: 3, truncated: false });
      expect((everything.banners as unknown[])[1]).toEqual({
        banner_id: admins.banner_id,
        text: 'for admins',
        audience: 'admins',
        severity: 'warning',
        status: 'active',
        dedupe_key: null,
        created_at: new Date(T0 + 1).toISOString(),
        expires_at: new Date(T0 + 1 + 7 * DAY).toISOString(),
        dismissed_at: null,
      });
      const ids = async (args: object) => ((await call(listBanners, args)).banners as { banner_id: string }[]).map((b) => b.banner_id);
      expect(await ids({ audience: 'admins' })).toEqual([gone.banner_id, admins.banner_id]);
      expect(await ids({ audience: 'admins', status: 'active' })).toEqual([admins.banner_id]);
      expect(await ids({ status: 'dismissed' })).toEqual([gone.banner_id]);
      expect(await ids({ audience: 'all' })).toEqual([all.banner_id]);
      expect(await ids({ audience: 'team:billing' })).toEqual([]);
      clock += 8 * DAY;
      expect(await ids({ status: 'expired' })).toEqual([admins.banner_id, all.banner_id]);
    });

    it('caps the answer at 100 and says it was truncated', async () => {
      for (let i = 0; i < 101; i++) {
        clock += 1;
        await call(showBanner, { text: `b${i}`, audience: 'all' });
      }
      const r = await call(listBanners, { audience: 'all' });
      expect(r.count).toBe(100);
      expect(r.truncated).toBe(true);
      expect((r.banners as { text: string }[])[0]!.text).toBe('b100');
    });
  });

  describe('outputSchema', () => {
    const sdk = new AjvJsonSchemaValidator();
    const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
    // Ajv defaults are strict about unknown keywords and formats (strictRequired stays off: the anyOf-of-required idiom).
    const strictAjv = addFormats(new Ajv({ allErrors: true }));
    const errorBody = errorResult({ code: 'NOT_FOUND', message: 'No banner has id bnr_x', path: '/banner_id' }).structuredContent;
    const withRetry = errorResult({ code: 'RATE_LIMITED', message: 'slow down', retry_after_s: 3, via: 'sms' }).structuredContent;

    it('has root type object, compiles under default (strict) ajv, and admits both a real result and the error shape', async () => {
      const shown = await call(showBanner, { text: 't', audience: 'all', dedupe_key: 'k' });
      const listed = await call(listBanners, {});
      const dismissed = await call(dismissBanner, { banner_id: shown.banner_id });
      const results: Record<string, Record<string, unknown>> = { show_banner: shown, dismiss_banner: dismissed, list_banners: listed };
      for (const tool of bannerTools) {
        expect(tool.outputSchema.type, tool.name).toBe('object');
        const strict = strictAjv.compile(tool.outputSchema);
        const client = sdk.getValidator(tool.outputSchema);
        for (const sample of [results[tool.name], errorBody, withRetry]) {
          expect(strict(sample), `${tool.name}: ${JSON.stringify(strict.errors)}`).toBe(true);
          expect(client(sample).valid, tool.name).toBe(true);
        }
        // And it is not vacuous: an empty object or a half result fails.
        expect(client({}).valid, tool.name).toBe(false);
        expect(client({ status: 'active' }).valid, tool.name).toBe(false);
      }
    });
  });
});

describe('activeBanners (the app feed)', () => {
  it('returns the active banners of the given segments only, most severe first, then newest', async () => {
    const info = await call(showBanner, { text: 'info all', audience: 'all' });
    clock += 1;
    const critical = await call(showBanner, { text: 'critical admins', audience: 'admins', severity: 'critical' });
    clock += 1;
    const info2 = await call(showBanner, { text: 'info admins', audience: 'admins' });
    clock += 1;
    await call(showBanner, { text: 'billing only', audience: 'team:billing', severity: 'warning' });
    const dismissed = await call(showBanner, { text: 'dismissed', audience: 'all', severity: 'critical' });
    await call(dismissBanner, { banner_id: dismissed.banner_id });
    await call(showBanner, { text: 'short', audience: 'all', expires_at: new Date(clock + 10).toISOString() });
    clock += 10;

    const feed = await activeBanners(store, ['all', 'admins', 'all'], clock);
    expect(feed.map((b) => b.banner_id)).toEqual([critical.banner_id, info2.banner_id, info.banner_id]);
    expect(feed[0]).toEqual({
      banner_id: critical.banner_id,
      text: 'critical admins',
      audience: 'admins',
      severity: 'critical',
      created_at: new Date(T0 + 1).toISOString(),
      expires_at: new Date(T0 + 1 + 7 * DAY).toISOString(),
    });
    expect(JSON.parse(JSON.stringify(feed))).toEqual(feed);
    // `all` is a segment, not a wildcard.
    expect((await activeBanners(store, ['all'], clock)).map((b) => b.text)).toEqual(['info all']);
    expect(await activeBanners(store, [], clock)).toEqual([]);
  });

  it('parses the audience query parameter', () => {
    expect(parseAudienceParam('all, admins,,team:billing,all')).toEqual(['all', 'admins', 'team:billing']);
    expect(parseAudienceParam(undefined)).toEqual([]);
    expect(parseAudienceParam('')).toEqual([]);
    expect(() => parseAudienceParam('all,Admins')).toThrow(/audience "Admins" is not a segment name/);
    // A name of any length is echoed clipped: every echo is capped.
    const long = (() => {
      try {
        parseAudienceParam('x'.repeat(10_000) + 'X');
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    })();
    expect(long).toContain('(10001 characters)');
    expect(long.length).toBeLessThan(300);
    // Each segment a stream follows is a store read per change: one request names at most 32.
    const names = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`).join(',');
    expect(parseAudienceParam(names(32) + ',s0')).toHaveLength(32);
    expect(() => parseAudienceParam(names(33))).toThrow(/names 33 segments; name at most 32/);
  });
});
