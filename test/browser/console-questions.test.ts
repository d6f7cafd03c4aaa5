/**
 * The console's questions (issue 37 item 7), in Chromium against the built CLI: the open
 * questions page with 0, 1 and 12 of them, and a notification's page once its question is
 * answered through the link its message carries (the answer page, GET then POST). Screenshots
 * at 390 and 1280 px against committed baselines (ids and times masked), and axe.
 */
import { createServer } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
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

/** A free port, so that NOTIFY_PUBLIC_URL (the links' base) is this server's own address. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  if (skip) return;
  assertBuilt();
  const port = await freePort();
  const env = cliEnv({
    NOTIFY_DATA_DIR: tempDataDir('notify-console-questions-'),
    NOTIFY_HTTP_TOKENS: `ops:${OPS},bot:${BOT}`,
    NOTIFY_OPERATOR_CLIENTS: 'ops',
    NOTIFY_PUBLIC_URL: `http://127.0.0.1:${port}`,
  });
  cli = await startHttpCli(env, ['--port', String(port)]);
  agent = await connectHttp(cli.url, 'ops-bot', 'modern', BOT);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await agent?.close().catch(() => {});
  await cli?.stop();
});

async function ask(text: string, choices: string[]): Promise<string> {
  const r = (await agent.callTool({
    name: 'send_notification',
    arguments: { via: 'slack', channel: '#ops', text, ask: { choices } },
  })) as ToolOutcome;
  expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
  return r.structuredContent!.id as string;
}

/** The answer link the dry run recorded in the message, as a person would find it. */
async function linkOf(id: string): Promise<string> {
  const res = await fetch(`${cli.origin}/console/notifications/${id}/payload.json`, { headers: { Authorization: `Bearer ${OPS}` } });
  const link = /https?:\/\/[^\s|>]+\/answer\/[A-Za-z0-9_-]+/.exec(await res.text())?.[0];
  expect(link, `no answer link in ${id}'s payload`).toBeDefined();
  return link!;
}

async function signedIn(viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport, reducedMotion: 'reduce', colorScheme: 'light' });
  const page = await context.newPage();
  await page.goto(`${cli.origin}/console/login`);
  await page.getByLabel('Operator token').fill(OPS);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();
  return page;
}

/** The page at both widths; a list's rows on the desktop only (on a phone an id wraps or not, and every row below moves). */
async function check(label: string, path: string, { list = false }: { list?: boolean } = {}): Promise<void> {
  for (const [size, viewport] of [
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const) {
    const page = await signedIn(viewport);
    await page.goto(`${cli.origin}${path}`);
    const mask = ['time', 'td[data-label="Notification"] a', 'pre', 'code', 'iframe'].map((s) => page.locator(s));
    mask.push(page.locator('h1', { hasText: 'ntf_' }));
    await expectPageLooksRight(page, `console-${label}-${size}`, viewport, {
      mask,
      fullPage: !list && size === 'phone',
      ...(list && size === 'phone' ? { clipHeight: 600 } : {}),
    });
    await page.context().close();
  }
}

describe.skipIf(skip)('console questions in Chromium', () => {
  it('lists open questions, with 0, 1 and 12 of them', async () => {
    await check('questions-0', '/console/questions');
    await ask('Deploy 142 failed its smoke test. Roll back?', ['Roll back', 'Keep']);
    await check('questions-1', '/console/questions', { list: true });
    for (let i = 2; i <= 12; i++) await ask(`Disk ${i} on db-${i} is 91% full. Expand it?`, ['Expand', 'Wait', 'Page DBA']);
    await check('questions-12', '/console/questions', { list: true });
  }, 180_000);

  it("shows a question answered through its link on the notification's page, and drops it from the open ones", async () => {
    const id = await ask('Certificate for api.example.com expires in 3 days. Renew now?', ['Renew now', 'Later']);
    const page = await signedIn(DESKTOP);
    await page.goto(`${cli.origin}/console/notifications/${id}`);
    await page.getByText('Not answered yet; open until').waitFor();
    // The person's side: the link from the message, its page, one button.
    await page.goto(await linkOf(id));
    await page.getByRole('button', { name: 'Renew now' }).click();
    await page.goto(`${cli.origin}/console/notifications/${id}`);
    const section = page.getByRole('region', { name: 'Question' });
    await expect.poll(() => section.textContent()).toMatch(/Answer\s*Renew now\s*By\s*link\s*Through\s*slack/);
    await page.goto(`${cli.origin}/console/questions`);
    expect(await page.getByRole('link', { name: id }).count()).toBe(0);
    await page.context().close();
    await check('question-answered', `/console/notifications/${id}`);
  }, 120_000);
});
