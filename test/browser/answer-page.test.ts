/**
 * The answer page in Chromium (DESIGN section 11): a question with 1, 2 and 5 choices, an
 * answered one and an expired one, at 390 and 1280 px: it fits the viewport, passes axe,
 * answers by keyboard (Tab to a choice, Enter), and looks like its committed baseline (times masked).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { answerToken } from '../../src/core/answer-token.js';
import { createLogger } from '../../src/core/log.js';
import { sendNotification } from '../../src/notification/pipeline.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { launchChromium, skipWithoutChromium } from './chromium.js';
import { DESKTOP, expectPageLooksRight, PHONE } from './page-check.js';

declare const document: { activeElement: { textContent: string } | null };

const SIZES = [
  ['phone', PHONE],
  ['desktop', DESKTOP],
] as const;
const skip = skipWithoutChromium();
let clock = Date.UTC(2026, 5, 1, 9, 30);
let app: App;
let http: HttpHandle;
let browser: Browser;

beforeAll(async () => {
  if (skip) return;
  const dir = mkdtempSync(join(tmpdir(), 'notify-answer-browser-'));
  app = await createApp(
    loadConfig({ NOTIFY_DATA_DIR: dir, HOME: dir, NOTIFY_PUBLIC_URL: 'https://notify.example.com' }),
    createLogger('error', () => {}),
    { now: () => clock },
  );
  http = await serveHttp(app, { port: 0 });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await http?.close();
  await app?.close();
});

/** A dry-run email question; its answer page's path. */
async function question(subject: string, ask: Record<string, unknown>): Promise<string> {
  const { id } = await sendNotification(
    app,
    'email',
    { via: 'email', to: 'lead@example.com', subject, body_html: '<p>x</p>', ask },
    { client: 'bot' },
  );
  return `/answer/${answerToken(app.answerKey!, id, '')}`;
}

/** Both widths: fits, passes axe, matches its baseline (./page-check.ts). */
async function check(label: string, path: string, status: number): Promise<void> {
  for (const [size, viewport] of SIZES) {
    const context = await browser.newContext({ viewport, reducedMotion: 'reduce', colorScheme: 'light' });
    const page = await context.newPage();
    const response = await page.goto(`${http.url}${path}`);
    expect(response!.status(), label).toBe(status);
    await expectPageLooksRight(page, `answer-${label}-${size}`, viewport, { mask: [page.locator('time')], fullPage: true });
    await context.close();
  }
}

describe.skipIf(skip)('the answer page in Chromium', () => {
  it('a question with 1, 2 and 5 choices fits a phone and a desktop and passes axe', async () => {
    await check('1-choice', await question('Disk on web-1 is at 95%', {}), 200);
    await check('2-choices', await question('Deploy v2 to production?', { choices: ['Ship it', 'Hold'] }), 200);
    const five = ['Restart now', 'Restart tonight at 02:00 UTC', 'Scale out to three replicas instead', 'Page the database team', 'Ignore'];
    await check('5-choices', await question('web-1 is out of memory: what should happen next?', { choices: five }), 200);
  });

  it('answers by keyboard: Tab reaches the first choice, Enter records it', async () => {
    const path = await question('Keyboard?', { choices: ['Yes', 'No'] });
    const page = await browser.newPage();
    await page.goto(`${http.url}${path}`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Yes');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('No');
    await page.keyboard.press('Enter');
    await page.waitForSelector('text=Answer recorded');
    expect(await page.locator('main').textContent()).toContain('You answered No');
    await page.close();
  });

  it('an answered and an expired question', async () => {
    const answered = await question('Deploy v2 to production?', { choices: ['Ship it', 'Hold'] });
    const page = await browser.newPage();
    await page.goto(`${http.url}${answered}`);
    await page.getByRole('button', { name: 'Ship it' }).click();
    await page.waitForSelector('text=Answer recorded');
    await page.close();
    await check('answered', answered, 409);
    const expired = await question('Rotate the API key?', { choices: ['Rotate', 'Later'], expires_in_s: 60 });
    clock += 61_000;
    await check('expired', expired, 410);
  });
});
