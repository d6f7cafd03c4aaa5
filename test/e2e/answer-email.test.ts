/**
 * An email question end to end over the built CLI (`notify-mcp --http`), in both protocol
 * eras: send_notification with `ask`, live to smtp-server; the link parsed from the received
 * mail (text and HTML parts); the answer page opened (GET) and a button pressed (POST) in
 * Chromium; a get_notification that was already waiting (wait_s) returns with the answer.
 * Then `notify-mcp answer` refuses that live question, and answers a dry-run one.
 */
import { createServer } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import { simpleParser } from 'mailparser';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, skipWithoutChromium } from '../browser/chromium.js';
import { cliEnv, runCli, tempDataDir } from '../helpers/cli.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { connectCli, connectHttp, type ToolOutcome, type Era, ERAS } from '../helpers/mcp-cli.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const TOKEN = 'lead-bot-token-0123456789abcdef';
const skip = skipWithoutChromium();

/** A free loopback port: NOTIFY_PUBLIC_URL must name it before the server starts. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as { port: number };
  await new Promise((r) => probe.close(r));
  return port;
}

let smtp: TestSmtpServer;
let server: HttpCli;
let browser: Browser;
let env: Record<string, string>;
const clients: Client[] = [];

beforeAll(async () => {
  if (skip) return;
  smtp = await startSmtpServer();
  const port = await freePort();
  env = cliEnv({
    NOTIFY_DATA_DIR: tempDataDir('notify-e2e-answer-'),
    NOTIFY_HTTP_TOKENS: `lead-bot:${TOKEN}`,
    NOTIFY_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SMTP_URL: smtp.url,
    EMAIL_FROM: 'notify-mcp <alerts@notify.test>',
    NOTIFY_EMAIL_ALLOW: 'example.com',
  });
  server = await startHttpCli(env, ['--port', String(port)]);
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await browser?.close();
  await server?.stop();
  await smtp?.close();
});

async function connect(era: Era): Promise<Client> {
  const client = await connectHttp(server.url, `answer-${era}`, era, TOKEN);
  clients.push(client);
  return client;
}
const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as ToolOutcome;

describe.skipIf(skip).each(ERAS)('an email question answered in a browser, %s client', (era) => {
  it('mail link → GET (nothing recorded) → POST in Chromium → the waiting get_notification has the answer', async () => {
    const client = await connect(era);
    const before = smtp.received.length;
    const sent = await call(client, 'send_notification', {
      via: 'email',
      to: ['lead@example.com', 'backup@example.com'],
      subject: `Deploy v2 to production? (${era})`,
      body_html: '<p>The canary is green.</p>',
      ask: { choices: ['Ship it', 'Hold'] },
    });
    expect(sent.isError, JSON.stringify(sent)).toBeFalsy();
    const id = (sent.structuredContent as { id: string }).id;
    expect(smtp.received.length).toBe(before + 1);

    const mail = await simpleParser(smtp.received.at(-1)!.raw);
    const link = /(http:\/\/127\.0\.0\.1:\d+\/answer\/[A-Za-z0-9_-]{43})/.exec(mail.text ?? '')?.[1];
    expect(link, mail.text).toBeDefined();
    expect(mail.html).toContain(`href="${link}"`);

    const page = await browser.newPage();
    const shown = await page.goto(link!);
    expect(shown!.status()).toBe(200);
    expect(await page.locator('h1').textContent()).toBe('Your answer');
    expect(await page.locator('blockquote').textContent()).toContain(`Deploy v2 to production? (${era})`);
    expect(await page.locator('.choices button').allTextContents()).toEqual(['Ship it', 'Hold']);
    // The GET recorded nothing.
    const open = await call(client, 'get_notification', { id });
    expect(open.structuredContent).toMatchObject({ question: { choices: ['Ship it', 'Hold'] } });
    expect((open.structuredContent as Record<string, unknown>).answer).toBeUndefined();

    const waiting = call(client, 'get_notification', { id, wait_s: 30 });
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    await page.getByRole('button', { name: 'Ship it' }).click();
    await page.waitForSelector('text=Answer recorded');
    const waited = await waiting;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(waited.structuredContent).toMatchObject({
      id,
      status: 'sent',
      wait: 'answered',
      answer: { choice: 'Ship it', by: 'link', via: 'email' },
    });
    // A second press, and the shell, are told who answered first.
    await page.goto(link!);
    expect(await page.locator('h1').textContent()).toBe('Already answered');
    const shell = await runCli(['answer', id, 'Hold'], env);
    expect(shell.code).toBe(1);
    expect(shell.stdout).toContain('already answered Ship it by link');
    await page.close();
  }, 60_000);
});

describe.skipIf(skip)('notify-mcp answer', () => {
  it('refuses a live question before it is answered, and answers a dry-run one', async () => {
    const client = await connect('modern');
    const live = await call(client, 'send_notification', {
      via: 'email',
      to: 'lead@example.com',
      subject: 'Live',
      body_html: '<p>x</p>',
      ask: {},
    });
    const liveId = (live.structuredContent as { id: string }).id;
    const refused = await runCli(['answer', liveId, 'Acknowledge'], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('was really sent; only a dry-run question is answered from the shell');

    // A dry run, in a store of its own (email without SMTP_URL is a dry run), over stdio.
    const dry = cliEnv({ NOTIFY_DATA_DIR: tempDataDir('notify-e2e-answer-dry-'), NOTIFY_PUBLIC_URL: 'https://notify.example.com' });
    const session = await connectCli(dry, 'answer-dry', 'modern');
    try {
      const asked = await call(session.client, 'send_notification', {
        via: 'email',
        to: 'lead@example.com',
        subject: 'Try it',
        body_html: '<p>x</p>',
        ask: { choices: ['Yes', 'No'] },
      });
      const id = (asked.structuredContent as { id: string; status: string }).id;
      expect(asked.structuredContent).toMatchObject({ status: 'dry_run' });
      const notOffered = await runCli(['answer', id, 'Maybe'], dry);
      expect([notOffered.code, notOffered.stdout]).toEqual([1, 'not recorded: choose one of "Yes", "No"\n']);
      const answered = await runCli(['answer', id, 'Yes'], dry);
      expect(answered.code, answered.stderr).toBe(0);
      expect(answered.stdout).toMatch(new RegExp(`^recorded ${id}: Yes \\(by cli, via email, at `));
      const shown = await call(session.client, 'get_notification', { id, wait_s: 1 });
      expect(shown.structuredContent).toMatchObject({ answer: { choice: 'Yes', by: 'cli', via: 'email' } });
      const unknown = await runCli(['answer', 'ntf_unknown', 'Yes'], dry);
      expect([unknown.code, unknown.stdout]).toEqual([1, 'not recorded: ntf_unknown asked no question in this store\n']);
    } finally {
      await session.close();
    }
    const help = await runCli(['--help'], dry);
    expect(help.stdout).toContain('notify-mcp answer <id> <choice>');
  });
});
