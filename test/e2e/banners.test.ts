/**
 * Banner lifecycle through the SDK client, in process (InMemoryTransport) with a clock the
 * test moves: show, list, dedupe, expiry, dismiss twice, unknown handle; and the feed query
 * apps read agrees with the tools.
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { activeBanners } from '../../src/banners/feed.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/core/log.js';
import { createServer } from '../../src/mcp/server.js';
import { tempDataDir } from '../helpers/cli.js';

let clock = Date.parse('2026-12-01T12:00:00Z');
let app: App;
let client: Client;

type Result = { isError?: boolean; structuredContent?: Record<string, any> };
const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<Result>;

beforeAll(async () => {
  app = await createApp(loadConfig({ NOTIFY_DATA_DIR: tempDataDir() }), silentLogger, { now: () => clock });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createServer(app).connect(serverSide);
  client = new Client({ name: 'banner-e2e', version: '1.0.0' });
  await client.connect(clientSide);
});

afterAll(async () => {
  await client.close();
  await app.close();
});

describe('banners over MCP', () => {
  it('show, list, dedupe, expire, dismiss twice, unknown id', async () => {
    const first = await call('show_banner', {
      text: 'Maintenance at 22:00 UTC',
      audience: 'all',
      severity: 'warning',
      dedupe_key: 'maint',
    });
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent).toMatchObject({
      banner_id: expect.stringMatching(/^bnr_[0-9a-f-]{36}$/),
      status: 'active',
      deduplicated: false,
    });
    const id = first.structuredContent!.banner_id as string;

    const again = await call('show_banner', { text: 'Maintenance at 22:00 UTC', audience: 'all', dedupe_key: 'maint' });
    expect(again.structuredContent).toMatchObject({ banner_id: id, deduplicated: true });

    const short = await call('show_banner', {
      text: 'Billing export delayed',
      audience: 'team:billing',
      expires_at: new Date(clock + 60_000).toISOString(),
    });
    const shortId = short.structuredContent!.banner_id as string;

    const active = await call('list_banners', { status: 'active' });
    expect(active.structuredContent!.banners.map((b: { banner_id: string }) => b.banner_id).sort()).toEqual([id, shortId].sort());
    expect((await activeBanners(app.store, ['admins'], clock)).length).toBe(0); // `all` is not a wildcard
    expect((await activeBanners(app.store, ['all', 'team:billing'], clock)).length).toBe(2);

    const past = await call('show_banner', { text: 'x', audience: 'all', expires_at: new Date(clock - 1000).toISOString() });
    expect(past.isError).toBe(true);
    expect(past.structuredContent!.error).toMatchObject({ code: 'INVALID_FIELD', path: '/expires_at' });

    clock += 61_000; // the short banner expires
    const afterExpiry = await call('list_banners', { status: 'active' });
    expect(afterExpiry.structuredContent!.banners.map((b: { banner_id: string }) => b.banner_id)).toEqual([id]);
    const expiredDismiss = await call('dismiss_banner', { banner_id: shortId });
    expect(expiredDismiss.isError).toBe(true);
    expect(expiredDismiss.structuredContent!.error).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('expired') });

    const d1 = await call('dismiss_banner', { banner_id: id });
    expect(d1.structuredContent).toMatchObject({ banner_id: id, status: 'dismissed', already_dismissed: false });
    const d2 = await call('dismiss_banner', { banner_id: id });
    expect(d2.structuredContent).toMatchObject({ banner_id: id, status: 'dismissed', already_dismissed: true });
    expect(await activeBanners(app.store, ['all'], clock)).toEqual([]);

    const unknown = await call('dismiss_banner', { banner_id: 'bnr_00000000-0000-4000-8000-000000000000' });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent!.error.code).toBe('NOT_FOUND');

    const misplaced = await call('show_banner', { text: 'x', audience: 'all', via: 'email' });
    expect(misplaced.isError).toBe(true);
    expect(misplaced.structuredContent!.error).toMatchObject({
      code: 'INVALID_FIELD',
      path: '/via',
      message: 'Drop via: show_banner does not take it.',
    });
  });
});
