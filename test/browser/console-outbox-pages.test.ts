/**
 * The console's pages of sends that are not (or not yet) a delivery record, and of a held
 * send, in Chromium against the built CLI: a held send's page fits a 390 px phone (its
 * SHA-256 wraps); scheduled and cancelled sends appear in the list under their filters with
 * 0, 1 and 12 of them; a retracted scheduled send has its page. Screenshots at 390 and 1280
 * px against committed baselines (ids, times, hashes and the kept call masked), and axe.
 */
import type { Client } from '@modelcontextprotocol/client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { assertBuilt, connectHttp, type ToolOutcome } from '../helpers/mcp-cli.js';
import { launchChromium, skipWithoutChromium } from './chromium.js';
import { DESKTOP, expectPageLooksRight, PHONE } from './page-check.js';

const OPS = 'ops-token-0123456789abcdef';
const BOT = 'bot-token-0123456789abcdef';

let cli: HttpCli;
let agent: Client;
let browser: Browser;
const skip = skipWithoutChromium();

beforeAll(async () => {
  if (skip) return;
  assertBuilt();
  const env = cliEnv({
    NOTIFY_DATA_DIR: tempDataDir('notify-console-outbox-browser-'),
    NOTIFY_HTTP_TOKENS: `ops:${OPS},bot:${BOT}`,
    NOTIFY_OPERATOR_CLIENTS: 'ops',
    NOTIFY_APPROVAL: 'email',
    NOTIFY_APPROVAL_MODE: 'console',
  });
  cli = await startHttpCli(env);
  agent = await connectHttp(cli.url, 'planning-agent', 'modern', BOT);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await agent?.close().catch(() => {});
  await cli?.stop();
});

async function call(args: Record<string, unknown>): Promise<string> {
  const r = (await agent.callTool({ name: 'send_notification', arguments: args })) as ToolOutcome;
  expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
  return r.structuredContent!.id as string;
}
const schedule = (text: string) => call({ via: 'slack', channel: '#ops', text, send_at: new Date(Date.now() + 86_400_000).toISOString() });

async function operator(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, reducedMotion: 'reduce', colorScheme: 'light' });
  const page = await context.newPage();
  await page.goto(`${cli.origin}/console/login`);
  await page.getByLabel('Operator token').fill(OPS);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();
  return { context, page };
}

const masks = (page: Page) => [
  page.locator('time'),
  page.locator('td[data-label="Notification"] a'),
  page.locator('code'),
  page.locator('dd a'),
  page.locator('h1', { hasText: 'ntf_' }),
  page.locator('pre'),
];

/**
 * The page at both widths (./page-check.ts). A list's rows are compared on the desktop only
 * (`list`): on a phone a row's random id wraps onto a second line or not, as its hex digits'
 * widths add up, and every row below moves.
 */
async function check(label: string, path: string, { list = false }: { list?: boolean } = {}): Promise<void> {
  for (const [size, viewport] of [
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const) {
    const { context, page } = await operator(viewport);
    await page.goto(`${cli.origin}${path}`);
    await expectPageLooksRight(page, `console-${label}-${size}`, viewport, {
      mask: masks(page),
      fullPage: !list && size === 'phone',
      ...(list && size === 'phone' ? { clipHeight: 600 } : {}),
    });
    await context.close();
  }
}

describe.skipIf(skip)('console pages of held, scheduled and retracted sends in Chromium', () => {
  it("a held send's page fits a phone: its SHA-256 wraps", async () => {
    const id = await call({
      via: 'email',
      to: 'finance@example.com',
      subject: 'Quarterly numbers for the board',
      body_html: '<p>Totals attached.</p>',
    });
    await check('held-detail', `/console/notifications/${id}`);
  }, 60_000);

  it('lists scheduled and cancelled sends under their filters, with 0, 1 and 12 of them', async () => {
    await check('scheduled-0', '/console?status=scheduled');
    const first = await schedule('Standup moved to 10:30');
    await check('scheduled-1', '/console?status=scheduled', { list: true });
    for (let i = 2; i <= 12; i++) await schedule(`Reminder ${i}: the deploy window opens at 18:00`);
    await check('scheduled-12', '/console?status=scheduled', { list: true });
    const { context, page } = await operator(DESKTOP);
    await page.goto(`${cli.origin}/console/waiting`);
    await page.getByRole('button', { name: `Retract ${first}` }).click();
    await page.getByText(`Retracted ${first}: it will not be sent.`).waitFor();
    await page.goto(`${cli.origin}/console?status=cancelled`);
    await page.getByRole('link', { name: first }).waitFor();
    await context.close();
    await check('cancelled-1', '/console?status=cancelled', { list: true });
  }, 180_000);

  it('a retracted scheduled send has its page', async () => {
    const id = await schedule('Office closed on Friday');
    const { context, page } = await operator(DESKTOP);
    await page.goto(`${cli.origin}/console/notifications/${id}`);
    await page.getByRole('button', { name: `Retract ${id}` }).click();
    await page.getByText(`Retracted ${id}: it will not be sent.`).waitFor();
    const shown = await page.goto(`${cli.origin}/console/notifications/${id}`);
    expect(shown?.status()).toBe(200);
    await page.getByText('It was retracted before it left: it is never sent.').waitFor();
    await context.close();
    await check('retracted-detail', `/console/notifications/${id}`);
  }, 60_000);
});
