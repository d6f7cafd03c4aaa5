/**
 * The operator console in a real browser (Debian's Chromium through playwright-core)
 * against the built CLI as `notify-mcp --http` under NOTIFY_APPROVAL_MODE=console, with a
 * real SMTP peer (smtp-server) as the provider: an agent's send is held; a person signs in,
 * approves it by keyboard or mouse and the peer receives it exactly once; a decline sends
 * nothing; a cross-origin form does nothing; script in a message or a banner runs nothing;
 * axe-core finds no violation; and screenshots at 390 and 1280 px, light and dark, with 0,
 * 1 and 50 rows, against committed baselines (ids and times masked: they change per run).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, ROOT, tempDataDir } from '../helpers/cli.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { assertBuilt, eraClient, readOutbox, type ToolOutcome } from '../helpers/mcp-cli.js';
import { SMTP_PASS, SMTP_USER, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { launchChromium, skipWithoutChromium } from './chromium.js';
import { compareWithBaseline, UPDATING } from './screenshots.js';

declare const document: { title: string; querySelector(selector: string): any };

const AXE = readFileSync(join(ROOT, 'test/node_modules/axe-core/axe.min.js'), 'utf8');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const OPS = 'ops-token-0123456789abcdef';
const BOT = 'bot-token-0123456789abcdef';

let cli: HttpCli;
let env: Record<string, string>;
let smtp: TestSmtpServer;
let agent: Client;
let browser: Browser;
/** Another origin, whose page posts a form to the console as an attacker's would. */
let evilSite: Server;
let evilOrigin: string;

const skip = skipWithoutChromium();

beforeAll(async () => {
  if (skip) return;
  assertBuilt();
  smtp = await startSmtpServer();
  env = cliEnv({
    NOTIFY_DATA_DIR: tempDataDir('notify-console-browser-'),
    NOTIFY_HTTP_TOKENS: `ops:${OPS},bot:${BOT}`,
    NOTIFY_OPERATOR_CLIENTS: 'ops',
    NOTIFY_APPROVAL: 'all',
    NOTIFY_APPROVAL_MODE: 'console',
    SMTP_URL: `smtp://${SMTP_USER}:${SMTP_PASS}@127.0.0.1:${smtp.port}`,
    EMAIL_FROM: 'Ops <ops@example.com>',
    NOTIFY_EMAIL_ALLOW: 'example.com',
  });
  cli = await startHttpCli(env);
  agent = eraClient('billing-agent', 'modern');
  await agent.connect(
    new StreamableHTTPClientTransport(new URL(cli.url), { requestInit: { headers: { Authorization: `Bearer ${BOT}` } } }),
  );
  evilSite = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://evil').searchParams;
    res
      .writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
      .end(
        `<!doctype html><html lang="en"><title>evil</title><form id="f" method="post" action="${q.get('target')}">` +
          `<input name="decision" value="approve"><input name="payload_sha256" value="${q.get('sha')}"><input name="csrf" value="guess"></form>` +
          '<script>document.getElementById("f").submit()</script>',
      );
  });
  await new Promise<void>((r) => evilSite.listen(0, '127.0.0.1', r));
  evilOrigin = `http://127.0.0.1:${(evilSite.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await agent?.close().catch(() => {});
  evilSite?.close();
  await cli?.stop();
  await smtp?.close();
});

async function heldSend(subject: string, body_html = `<h1>${subject}</h1><p>Totals attached.</p>`): Promise<string> {
  const result = (await agent.callTool({
    name: 'send_notification',
    arguments: { via: 'email', to: ['finance@example.com', 'cfo@example.com'], subject, body_html },
  })) as ToolOutcome;
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ status: 'pending_approval' });
  return result.structuredContent!.id as string;
}

/** An operator's browser, signed in through the form (the token typed once). */
async function operator(options: BrowserContextOptions = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: DESKTOP, reducedMotion: 'reduce', colorScheme: 'light', ...options });
  const page = await context.newPage();
  await page.goto(`${cli.origin}/console`);
  await page.getByLabel('Operator token').fill(OPS);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();
  return { context, page };
}

const card = (page: Page, subject: string) => page.locator('section.card', { has: page.getByRole('heading', { name: subject }) });

async function axeViolations(page: Page): Promise<string[]> {
  // The console's CSP allows no script; axe is injected by the browser driver, which CSP does not govern.
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

/** Ids and times change on every run; the rest of the page must not. */
const masks = (page: Page) => [
  page.locator('time'),
  page.locator('td[data-label="Notification"] a'),
  page.locator('code'),
  page.locator('dd a'),
];

async function screenshots(label: string, path: string): Promise<void> {
  for (const [size, viewport] of [
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const) {
    for (const colorScheme of ['light', 'dark'] as const) {
      const { context, page } = await operator({ viewport, colorScheme });
      await page.goto(`${cli.origin}${path}`);
      // A list's rows are compared on the desktop only: on a phone a row's random id wraps onto a
      // second line or not, as its hex digits' widths add up, and every row below it moves.
      const clip = size === 'phone' && label.startsWith('list') ? { clip: { x: 0, y: 0, width: viewport.width, height: 600 } } : {};
      const png = await page.screenshot({ ...clip, animations: 'disabled', caret: 'hide', mask: masks(page), maskColor: '#888888' });
      const name = `console-${label}-${size}-${colorScheme}`;
      const result = compareWithBaseline(name, png);
      expect(result.diffPath, `${name}: ${(result.ratio * 100).toFixed(2)}% of pixels differ, see ${result.diffPath}`).toBeUndefined();
      if (UPDATING && name === 'console-approvals-1-desktop-light') writeFileSync(join(ROOT, 'docs/console-approvals.png'), png);
      await context.close();
    }
  }
}

describe.skipIf(skip)('the operator console in Chromium', () => {
  // First, on an empty store: the screenshots count rows.
  it('looks like the committed screenshots with 0, 1 and 50 rows (approvals: 50 held, 20 a page), at phone and desktop widths, light and dark', async () => {
    await screenshots('list-0', '/console');
    await screenshots('approvals-0', '/console/approvals');
    await heldSend('Quarterly numbers for the board');
    await screenshots('list-1', '/console');
    await screenshots('approvals-1', '/console/approvals');
    for (let i = 2; i <= 50; i++) await heldSend(`Invoice reminder ${i}`);
    await screenshots('list-50', '/console');
    // Many held: the newest 20 cards, then a link to the older ones.
    await screenshots('approvals-50', '/console/approvals');
  }, 300_000);

  it('an agent send is held; a person approves it in the console by keyboard, and the SMTP peer receives it once', async () => {
    const before = smtp.received.length;
    const id = await heldSend('Payroll run approved?');
    expect(smtp.received.length).toBe(before);
    const { context, page } = await operator();
    await page.getByRole('link', { name: 'Approvals' }).click();
    const held = card(page, 'Payroll run approved?');
    await expect.poll(() => held.count()).toBe(1);
    await held.getByLabel('Reason (optional)').fill('checked with payroll');
    // By keyboard: from the reason, Tab reaches Approve, and Enter presses it.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.querySelector(':focus')?.textContent)).toBe('Approve');
    await page.keyboard.press('Enter');
    await page.getByText(`Approved ${id}: it left (sent).`).waitFor();
    expect(smtp.received.length).toBe(before + 1);
    expect(smtp.received.at(-1)!.raw).toContain('Payroll run approved?');
    // The page again, and the back button's resubmission, send nothing more.
    await page.goBack();
    await page.reload();
    await page.goto(`${cli.origin}/console/notifications/${id}`);
    await page.getByText('checked with payroll').waitFor();
    expect(smtp.received.length).toBe(before + 1);
    const row = (await readOutbox(env)).find((r) => r.id === id)!;
    expect(row).toMatchObject({ status: 'sent', approval: { outcome: 'approved', decided_by: 'ops', reason: 'checked with payroll' } });
    await context.close();
  });

  it('a decline sends nothing', async () => {
    const before = smtp.received.length;
    const id = await heldSend('Send the whole customer list?');
    const { context, page } = await operator();
    await page.goto(`${cli.origin}/console/approvals`);
    await card(page, 'Send the whole customer list?').getByRole('button', { name: 'Decline' }).click();
    await page.getByText(`Declined ${id}: nothing was sent.`).waitFor();
    expect(await card(page, 'Send the whole customer list?').count()).toBe(0);
    expect(smtp.received.length).toBe(before);
    expect((await readOutbox(env)).find((r) => r.id === id)).toMatchObject({ status: 'declined' });
    await context.close();
  });

  it("a form posted from another origin, in the operator's own browser, does nothing", async () => {
    const before = smtp.received.length;
    const id = await heldSend('Wire transfer instructions');
    const { context, page } = await operator();
    await page.goto(`${cli.origin}/console/notifications/${id}`);
    const sha = await page.locator('input[name="payload_sha256"]').first().inputValue();
    const response = page.waitForResponse((r) => r.url() === `${cli.origin}/console/approvals/${id}`);
    await page.goto(`${evilOrigin}/?target=${encodeURIComponent(`${cli.origin}/console/approvals/${id}`)}&sha=${sha}`);
    // SameSite=Strict keeps the session cookie off the cross-site POST; the Origin check and CSRF token stand behind it.
    expect([401, 403]).toContain((await response).status());
    expect(smtp.received.length).toBe(before);
    expect((await readOutbox(env)).find((r) => r.id === id)).toMatchObject({ status: 'pending_approval' });
    await context.close();
  });

  it('a retract of a scheduled send, by the Retract button, means it is never sent', async () => {
    const result = (await agent.callTool({
      name: 'send_notification',
      arguments: {
        via: 'email',
        to: 'finance@example.com',
        subject: 'Reminder for tomorrow',
        body_html: '<p>Tomorrow</p>',
        send_at: new Date(Date.now() + 86_400_000).toISOString(),
      },
    })) as ToolOutcome;
    expect(result.structuredContent, JSON.stringify(result.structuredContent)).toMatchObject({ status: 'scheduled' });
    const id = result.structuredContent!.id as string;
    const { context, page } = await operator();
    await page.getByRole('link', { name: 'Scheduled' }).click();
    await page.getByRole('button', { name: `Retract ${id}` }).click();
    await page.getByText(`Retracted ${id}: it will not be sent.`).waitFor();
    expect(await page.getByRole('button', { name: `Retract ${id}` }).count()).toBe(0);
    await context.close();
  });

  it('script in a message or a banner runs nothing', async () => {
    const id = await heldSend(
      '<img src=x onerror="document.title=\'pwned\'">',
      '<p>Hello</p><script>document.title = "pwned"; parent.document.title = "pwned"</script>',
    );
    const { context, page } = await operator();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${cli.origin}/console/notifications/${id}`);
    const frame = page.frameLocator('iframe.mail');
    await frame.getByText('Hello').waitFor();
    expect(await page.title()).not.toContain('pwned');
    const mailFrame = page.frames().find((f) => f.url().endsWith('/html'))!;
    expect(await mailFrame.evaluate(() => document.title)).not.toBe('pwned');

    await page.getByRole('link', { name: 'Banners' }).click();
    await page.getByLabel('Text').fill('<img src=x onerror="document.title=\'pwned\'"> maintenance tonight');
    await page.getByRole('button', { name: 'Show banner' }).click();
    await page.getByText('<img src=x onerror="document.title=\'pwned\'"> maintenance tonight').waitFor();
    expect(await page.title()).not.toContain('pwned');
    await page
      .getByRole('button', { name: /^Dismiss banner/ })
      .first()
      .click();
    await page.getByText(/Dismissed banner/).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('passes axe-core with no violations on every page, light and dark, phone and desktop', async () => {
    const [row] = await readOutbox(env);
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const viewport of [DESKTOP, PHONE]) {
        const { context, page } = await operator({ colorScheme, viewport });
        for (const path of [
          '/console',
          '/console/approvals',
          `/console/notifications/${row!.id}`,
          '/console/waiting',
          '/console/banners',
          '/console?status=declined',
        ]) {
          await page.goto(`${cli.origin}${path}`);
          expect(await axeViolations(page), `${path} ${colorScheme} ${viewport.width}`).toEqual([]);
        }
        await context.clearCookies();
        await page.goto(`${cli.origin}/console/login`);
        expect(await axeViolations(page), `login ${colorScheme}`).toEqual([]);
        await context.close();
      }
    }
  }, 120_000);
});
