/**
 * The banner widget in a real browser (Debian's Chromium through playwright-core) against
 * the built CLI as `notify-mcp --http`, banners made and ended over MCP by the v2 client:
 * live show and dismiss, each severity's role, text never parsed as HTML, a viewer's own
 * dismissal, 50 banners, reconnecting with backoff, embedding on another origin, axe-core,
 * and screenshots against committed baselines.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, ROOT, tempDataDir } from '../helpers/cli.js';
import { startHttpCli } from '../helpers/http-cli.js';
import { assertBuilt, eraClient, type ToolOutcome } from '../helpers/mcp-cli.js';
import { launchChromium, skipWithoutChromium } from './chromium.js';
import { compareWithBaseline, UPDATING } from './screenshots.js';

// Page functions run in the browser; the project's tsconfig has no DOM lib, so name the few we use.
declare const document: { querySelector(selector: string): any; createElement(tag: string): any };
declare function getComputedStyle(el: unknown): { display: string; fontSize: string; backgroundColor: string; borderLeftColor: string };

const AXE = readFileSync(join(ROOT, 'test/node_modules/axe-core/axe.min.js'), 'utf8');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let server: ChildProcess;
let base: string;
let client: Client;
let browser: Browser;
/** A page on another origin that embeds the widget, as an app would. */
let hostSite: Server;
let hostOrigin: string;

const skip = skipWithoutChromium();

beforeAll(async () => {
  if (skip) return;
  assertBuilt();
  hostSite = createServer((req, res) => {
    // ?server=<notify-mcp base URL>&audience=…&token=…; hostile CSS on purpose: the widget's
    // shadow root must keep it out.
    const q = new URL(req.url ?? '/', 'http://host').searchParams;
    const token = q.get('token') ? ` data-token="${q.get('token')}"` : '';
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(
      `<!doctype html><html lang="en"><title>an app</title><style>* { color: red !important; font-size: 40px !important; } div, span, button { display: inline !important; } notify-banners { display: block !important; }</style>
       <main><h1>An app</h1></main><script src="${q.get('server')}/widget.js" data-audience="${q.get('audience')}"${token}></script>`,
    );
  });
  await new Promise<void>((r) => hostSite.listen(0, '127.0.0.1', r));
  hostOrigin = `http://127.0.0.1:${(hostSite.address() as AddressInfo).port}`;
  const cli = await startHttpCli(cliEnv({ NOTIFY_DATA_DIR: tempDataDir('notify-widget-'), NOTIFY_FEED_ORIGINS: hostOrigin }));
  server = cli.child;
  base = cli.origin;
  client = eraClient('widget-test', 'modern');
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await client?.close().catch(() => {});
  hostSite?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
});

async function show(args: { text: string; audience: string; severity?: string }): Promise<string> {
  const result = (await client.callTool({ name: 'show_banner', arguments: args })) as ToolOutcome;
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  return result.structuredContent!.banner_id as string;
}

async function operatorDismiss(id: string): Promise<void> {
  const result = (await client.callTool({ name: 'dismiss_banner', arguments: { banner_id: id } })) as ToolOutcome;
  expect(result.isError).toBeFalsy();
}

/** A viewer: its own browser context (own localStorage), light, no animation. */
async function viewer(options: BrowserContextOptions = {}) {
  return browser.newContext({ viewport: DESKTOP, reducedMotion: 'reduce', colorScheme: 'light', ...options });
}

/** The demo page for `audience`, once the widget holds the stream's first snapshot. */
async function demo(audience: string, options: BrowserContextOptions = {}): Promise<Page> {
  const page = await (await viewer(options)).newPage();
  await page.goto(`${base}/?audience=${audience}`);
  await live(page);
  return page;
}

const live = (page: Page) => page.locator('notify-banners[data-state="live"]').waitFor({ state: 'attached', timeout: 10_000 });
/** Banner rows (Playwright's CSS engine reaches into the open shadow root). */
const rows = (page: Page) => page.locator('notify-banners .banner');
const row = (page: Page, text: string) => page.locator('notify-banners .banner', { hasText: text });

async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(ctx: unknown): Promise<{ violations: { id: string; help: string; nodes: { target: unknown }[] }[] }> };
      }
    ).axe;
    return (await axe.run(document)).violations;
  });
  return violations.map((v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}

describe.skipIf(skip)('the banner widget in Chromium', () => {
  it('shows a banner within 1 s of show_banner, and dismiss_banner removes it for every viewer', async () => {
    const [first, second] = await Promise.all([demo('flow'), demo('flow')]);
    const id = await show({ text: 'Payments are degraded', audience: 'flow', severity: 'critical' });
    // The tool has answered, so the banner is stored: from here the stream has 1 s.
    await Promise.all([first, second].map((p) => row(p, 'Payments are degraded').waitFor({ state: 'visible', timeout: 1_000 })));

    await operatorDismiss(id);
    await Promise.all([first, second].map((p) => row(p, 'Payments are degraded').waitFor({ state: 'detached', timeout: 1_000 })));
    await first.context().close();
    await second.context().close();
  });

  it('gives each severity its role and a style of its own', async () => {
    await show({ text: 'Weekly report ready', audience: 'roles', severity: 'info' });
    await show({ text: 'Maintenance at 22:00 UTC', audience: 'roles', severity: 'warning' });
    await show({ text: 'Payments are down', audience: 'roles', severity: 'critical' });
    const page = await demo('roles');
    await expect.poll(() => rows(page).count()).toBe(3);
    const seen = await rows(page).evaluateAll((banners) =>
      banners.map((b) => ({
        severity: b.getAttribute('data-severity'),
        role: b.getAttribute('role'),
        label: b.querySelector('.tag')?.textContent,
        background: getComputedStyle(b).backgroundColor,
        border: getComputedStyle(b).borderLeftColor,
      })),
    );
    // Most severe first.
    expect(seen.map(({ severity, role, label }) => ({ severity, role, label }))).toEqual([
      { severity: 'critical', role: 'alert', label: 'Critical' },
      { severity: 'warning', role: 'status', label: 'Warning' },
      { severity: 'info', role: 'status', label: 'Info' },
    ]);
    expect(new Set(seen.map((s) => s.background)).size).toBe(3);
    expect(new Set(seen.map((s) => s.border)).size).toBe(3);
    // What assistive technology sees, through the shadow root.
    expect(await page.getByRole('alert').count()).toBe(1);
    expect(await page.getByRole('alert').textContent()).toContain('Payments are down');
    expect(await page.getByRole('button', { name: 'Dismiss warning banner: Maintenance at 22:00 UTC' }).count()).toBe(1);
    await page.context().close();
  });

  it('renders banner text as text, never as markup', async () => {
    const text = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>&amp; <b>bold</b>`;
    await show({ text, audience: 'xss', severity: 'info' });
    const page = await demo('xss');
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await page.locator('notify-banners .text').textContent()).toBe(text);
    expect(await page.locator('notify-banners img, notify-banners b, notify-banners .banner script').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
    await page.context().close();
  });

  it("remembers a viewer's own dismissal across reloads, for that viewer only", async () => {
    const a = await show({ text: 'Banner A', audience: 'viewer', severity: 'warning' });
    const b = await show({ text: 'Banner B', audience: 'viewer', severity: 'info' });
    await show({ text: 'Banner C', audience: 'viewer', severity: 'info' });
    const page = await demo('viewer');
    await expect.poll(() => rows(page).count()).toBe(3);

    // Keyboard only: Enter on A's dismiss button; focus moves on to the next banner.
    await page.getByRole('button', { name: 'Dismiss warning banner: Banner A' }).focus();
    await page.keyboard.press('Enter');
    await row(page, 'Banner A').waitFor({ state: 'detached' });
    const focused = await page.evaluate(() =>
      document.querySelector('notify-banners')!.shadowRoot!.activeElement?.getAttribute('aria-label'),
    );
    expect(focused).toBe('Dismiss info banner: Banner C'); // C took A's place (newest first among infos)
    // Escape dismisses the banner that holds focus.
    await page.getByRole('button', { name: 'Dismiss info banner: Banner B' }).focus();
    await page.keyboard.press('Escape');
    await row(page, 'Banner B').waitFor({ state: 'detached' });

    await page.reload();
    await live(page);
    await expect.poll(() => rows(page).allTextContents()).toEqual([expect.stringContaining('Banner C')]);

    // Another viewer still sees both, and so does the server: the dismissal was this viewer's.
    const other = await demo('viewer');
    await expect.poll(() => rows(other).count()).toBe(3);
    const feed = (await (await fetch(`${base}/banners?audience=viewer`)).json()) as { banners: { banner_id: string }[] };
    expect(feed.banners.map((x) => x.banner_id)).toEqual(expect.arrayContaining([a, b]));
    await page.context().close();
    await other.context().close();
  });

  it('stays usable with 50 banners: three shown, the rest behind a toggle, in a bounded scrolling list', async () => {
    for (let i = 0; i < 50; i++)
      await show({ text: `Notice ${i + 1} of 50`, audience: 'many', severity: (['info', 'warning', 'critical'] as const)[i % 3] });
    const page = await demo('many');
    await page.evaluate(() => {
      const button = document.createElement('button');
      button.id = 'host-button';
      button.textContent = 'Host page button';
      button.addEventListener('click', () => (button.dataset.clicks = String(Number(button.dataset.clicks ?? 0) + 1)));
      document.querySelector('footer')!.append(button);
    });
    await expect.poll(() => rows(page).filter({ visible: true }).count()).toBe(3);
    const toggle = page.getByRole('button', { name: 'Show 47 more' });
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    const collapsed = (await page.locator('notify-banners').boundingBox())!;
    expect(collapsed.height).toBeLessThan(DESKTOP.height / 3);
    await page.click('#host-button');

    await toggle.click();
    await expect.poll(() => rows(page).filter({ visible: true }).count()).toBe(50);
    const list = await page
      .locator('notify-banners #notify-list')
      .evaluate((list) => ({ client: list.clientHeight, scroll: list.scrollHeight }));
    expect(list.client).toBeLessThanOrEqual(DESKTOP.height / 2);
    expect(list.scroll).toBeGreaterThan(list.client);
    await page.click('#host-button');
    expect(await page.locator('#host-button').getAttribute('data-clicks')).toBe('2');

    await page.getByRole('button', { name: 'Show fewer' }).click();
    await expect.poll(() => rows(page).filter({ visible: true }).count()).toBe(3);
    await page.context().close();
  });

  it('draws "Show N more" only when banners are behind it: 0 to 4 banners, judged by what is on screen', async () => {
    for (let n = 0; n <= 4; n++) {
      const audience = `count-${n}`;
      for (let i = 0; i < n; i++) await show({ text: `Notice ${i + 1} of ${n}`, audience, severity: 'info' });
      const page = await demo(audience);
      await expect.poll(() => rows(page).filter({ visible: true }).count(), { message: `${n} banners` }).toBe(Math.min(n, 3));
      const toggle = page.locator('notify-banners button.more');
      const drawn = await toggle.evaluate((b) => {
        const box = b.getBoundingClientRect();
        return { display: getComputedStyle(b).display, width: box.width, height: box.height };
      });
      // Any "Show … more" the viewer can see, whatever element draws it.
      const toggles = await page
        .getByText(/Show -?\d+ more/)
        .filter({ visible: true })
        .count();
      if (n <= 3) {
        expect(drawn, `${n} banners`).toEqual({ display: 'none', width: 0, height: 0 });
        expect(await toggle.isVisible()).toBe(false);
        expect(toggles, `${n} banners`).toBe(0);
      } else {
        expect(drawn.height).toBeGreaterThan(0);
        expect(await toggle.textContent()).toBe('Show 1 more');
        expect(toggles).toBe(1);
      }
      // The strip is exactly as tall as the rows and toggle it draws, and nothing at all with no banner.
      const host = await page.locator('notify-banners').boundingBox();
      const parts = await page
        .locator('notify-banners .banner, notify-banners button.more')
        .evaluateAll((els) => els.reduce((sum: number, e: any) => sum + (e.getBoundingClientRect() as { height: number }).height, 0));
      if (n === 0) expect(host === null || host.height === 0, `host ${JSON.stringify(host)}`).toBe(true);
      else expect(Math.abs(host!.height - parts), `${n} banners: host ${host!.height}, parts ${parts}`).toBeLessThan(1);
      if (n === 0 || n === 1 || n === 3) {
        const png = await page.screenshot({ animations: 'disabled', caret: 'hide' });
        const result = compareWithBaseline(`widget-${n}-banners`, png);
        expect(
          result.diffPath,
          `${n} banners: ${(result.ratio * 100).toFixed(2)}% of pixels differ, see ${result.diffPath}`,
        ).toBeUndefined();
      }
      await page.context().close();
    }
  });

  it('backs off and retries when the stream refuses, then shows the banners', async () => {
    await show({ text: 'Back after an outage', audience: 'backoff', severity: 'info' });
    const context = await viewer();
    const attempts: number[] = [];
    await context.route('**/banners/stream?**', (route) => {
      attempts.push(Date.now());
      return attempts.length <= 2 ? route.fulfill({ status: 503, body: 'busy' }) : route.continue();
    });
    const page = await context.newPage();
    await page.goto(`${base}/?audience=backoff`);
    await row(page, 'Back after an outage').waitFor({ state: 'visible', timeout: 15_000 });
    expect(attempts.length).toBe(3);
    // 1-2 s after the first refusal, 2-4 s after the second (random factor 0.5-1).
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(950);
    expect(attempts[2]! - attempts[1]!).toBeGreaterThanOrEqual(1_950);
    await context.close();
  });

  it('resumes its own reconnects from the last event id (?last_event_id=)', async () => {
    await show({ text: 'Resumed notice', audience: 'resume', severity: 'info' });
    const context = await viewer();
    const seen: string[] = [];
    await context.route('**/banners/stream?**', (route) => {
      seen.push(route.request().url());
      // 1: a stream that ends after its snapshot (the browser reconnects by itself);
      // 2: refused (the widget takes over, with a delay); 3: the real stream.
      if (seen.length === 1) {
        return route.fulfill({
          status: 200,
          headers: { 'Content-Type': 'text/event-stream' },
          body: 'retry: 100\n\nevent: snapshot\nid: cursor-7\ndata: {"banners":[]}\n\n',
        });
      }
      return seen.length === 2 ? route.fulfill({ status: 503, body: 'busy' }) : route.continue();
    });
    const page = await context.newPage();
    await page.goto(`${base}/?audience=resume`);
    await row(page, 'Resumed notice').waitFor({ state: 'visible', timeout: 15_000 });
    // Request 2 is the browser's own reconnect; its Last-Event-ID header is the browser's
    // business, and request interception does not show it, so it is not checked here.
    expect(new URL(seen[0]!).searchParams.get('last_event_id')).toBeNull();
    expect(new URL(seen[2]!).searchParams.get('last_event_id')).toBe('cursor-7');
    await context.close();
  });

  it('works embedded on another origin, and the host page CSS does not reach it', async () => {
    await show({ text: 'Embedded notice', audience: 'embedded', severity: 'warning' });
    const page = await (await viewer()).newPage();
    await page.goto(`${hostOrigin}/?server=${base}&audience=embedded`);
    await row(page, 'Embedded notice').waitFor({ state: 'visible', timeout: 10_000 });
    const style = await row(page, 'Embedded notice').evaluate((b) => ({
      display: getComputedStyle(b).display,
      size: getComputedStyle(b).fontSize,
    }));
    expect(style).toEqual({ display: 'flex', size: '14px' });
    await page.context().close();

    // The host page forces notify-banners to display: with no banner, still nothing is drawn.
    const empty = await (await viewer()).newPage();
    await empty.goto(`${hostOrigin}/?server=${base}&audience=embedded-none`);
    await live(empty);
    expect(await empty.locator('notify-banners').evaluate((h) => getComputedStyle(h).display)).toBe('block');
    expect((await empty.locator('notify-banners').boundingBox())?.height ?? 0).toBe(0);
    expect(
      await empty
        .getByText(/Show -?\d+ more/)
        .filter({ visible: true })
        .count(),
    ).toBe(0);
    await empty.context().close();
  });

  it('reads a feed that needs a token (NOTIFY_READ_AUTH=1) with data-token, and shows nothing with a wrong one', async () => {
    const ops = 'ops-token-0123456789abcdef';
    const feed = 'feed-token-0123456789abcdef';
    const guarded = await startHttpCli(
      cliEnv({
        NOTIFY_DATA_DIR: tempDataDir('notify-widget-auth-'),
        NOTIFY_FEED_ORIGINS: hostOrigin,
        NOTIFY_READ_AUTH: '1',
        NOTIFY_HTTP_TOKENS: `ops:${ops}`,
        NOTIFY_FEED_TOKENS: `web:${feed}`,
      }),
    );
    const opsClient = eraClient('widget-auth', 'modern');
    try {
      await opsClient.connect(
        new StreamableHTTPClientTransport(new URL(`${guarded.origin}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${ops}` } },
        }),
      );
      const shown = (await opsClient.callTool({
        name: 'show_banner',
        arguments: { text: 'Members only', audience: 'members' },
      })) as ToolOutcome;
      expect(shown.isError).toBeFalsy();

      const page = await (await viewer()).newPage();
      await page.goto(`${hostOrigin}/?server=${guarded.origin}&audience=members&token=${feed}`);
      await row(page, 'Members only').waitFor({ state: 'visible', timeout: 10_000 });
      await page.goto(`${hostOrigin}/?server=${guarded.origin}&audience=members&token=not-the-token-0123456789`);
      await page.locator('notify-banners[data-state="retrying"]').waitFor({ state: 'attached', timeout: 10_000 });
      expect(await rows(page).count()).toBe(0);
      expect(await page.locator('notify-banners').isVisible()).toBe(false);
      await page.context().close();
    } finally {
      await opsClient.close().catch(() => {});
      const exited = new Promise((r) => guarded.child.once('exit', r));
      guarded.child.kill('SIGTERM');
      await exited;
    }
  });

  it('passes axe-core with no violations, light and dark, collapsed and expanded', async () => {
    await show({ text: 'Card payments are failing for some customers', audience: 'a11y', severity: 'critical' });
    await show({ text: 'Maintenance at 22:00 UTC', audience: 'a11y', severity: 'warning' });
    await show({ text: 'Weekly report ready', audience: 'a11y', severity: 'info' });
    await show({ text: 'New: CSV export', audience: 'a11y', severity: 'info' });
    for (const colorScheme of ['light', 'dark'] as const) {
      const page = await demo('a11y', { colorScheme });
      await expect.poll(() => rows(page).filter({ visible: true }).count()).toBe(3);
      expect(await axeViolations(page), colorScheme).toEqual([]);
      await page.getByRole('button', { name: 'Show 1 more' }).click();
      expect(await axeViolations(page), `${colorScheme}, expanded`).toEqual([]);
      await page.context().close();
    }
  });

  it('looks like the committed screenshots at phone and desktop widths', async () => {
    // Fixed banners, no animation, no clock on screen: only font rasterising may differ.
    await show({ text: 'Payments are degraded: card payments may fail. We are on it.', audience: 'all', severity: 'critical' });
    await show({ text: 'Maintenance at 22:00 UTC: the dashboard will be read-only for 15 minutes.', audience: 'all', severity: 'warning' });
    await show({ text: 'New: export invoices as CSV from the Billing page.', audience: 'all', severity: 'info' });
    await show({ text: 'Weekly report ready', audience: 'all', severity: 'info' });
    for (const [name, viewport] of [
      ['demo-phone', PHONE],
      ['demo-desktop', DESKTOP],
    ] as const) {
      const page = await demo('all', { viewport });
      await expect.poll(() => rows(page).filter({ visible: true }).count()).toBe(3);
      const png = await page.screenshot({ animations: 'disabled', caret: 'hide' });
      const result = compareWithBaseline(name, png);
      expect(result.diffPath, `${name}: ${(result.ratio * 100).toFixed(2)}% of pixels differ, see ${result.diffPath}`).toBeUndefined();
      if (UPDATING && name === 'demo-desktop') writeFileSync(join(ROOT, 'docs/widget-demo.png'), png);
      await page.context().close();
    }
  });
});
