/**
 * The answer page over real HTTP (DESIGN section 11): GET shows the question and a button per
 * choice and records nothing; POST records the first answer; every bad request gets a small
 * page with its status, no stack trace, and changes nothing.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/core/log.js';
import { sendNotification } from '../../src/notification/pipeline.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { raw, type Sent } from '../helpers/http.js';

const LINK = /\/answer\/([A-Za-z0-9_-]{43})/;
let clock = Date.UTC(2026, 5, 1, 12);
let app: App;
let http: HttpHandle;

/** A dry-run email that asks; its token, read from the mail as recorded. */
async function question(ask: Record<string, unknown> = { choices: ['Ship it', 'Wait <1h>'] }): Promise<{ id: string; token: string }> {
  const call = { via: 'email', to: 'lead@example.com', subject: 'Deploy v2 & migrate?', body_html: '<p>Ready.</p>', ask };
  const { id } = await sendNotification(app, 'email', call, { client: 'bot' });
  const mime = ((await app.store.getDelivery(id))!.payload as { raw: string }).raw.replace(/=\r?\n/g, '');
  return { id, token: LINK.exec(mime)![1]! };
}

const form = (body: string, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: http.url, ...headers },
  body,
});
const post = (token: string, choice: string, headers: Record<string, string> = {}) =>
  raw(`${http.url}/answer/${token}`, form(`choice=${encodeURIComponent(choice)}`, headers));

/** A refusal: its status, a page that says why, no stack trace, nothing recorded for `id`. */
async function refusedWith(sent: Sent, status: number, words: RegExp, id?: string): Promise<void> {
  expect(sent.status, sent.body).toBe(status);
  expect(sent.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(sent.body).toMatch(words);
  expect(sent.body).not.toMatch(/\(\/[^)]+:\d+:\d+\)|node:internal|Error:/);
  if (id) expect((await app.store.getQuestion(id))!.answer).toBeNull();
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notify-answer-page-'));
  app = await createApp(
    loadConfig({ NOTIFY_DATA_DIR: dir, HOME: dir, NOTIFY_PUBLIC_URL: 'https://notify.example.com' }),
    createLogger('error', () => {}),
    { now: () => clock },
  );
  http = await serveHttp(app, { port: 0 });
});
afterAll(async () => {
  await http?.close();
  await app?.close();
});

describe('GET /answer/<token>', () => {
  it('shows the question, escaped, with one POST form per choice, under the console CSP; records nothing', async () => {
    const { id, token } = await question();
    const before = (await app.store.auditHead()).seq;
    for (let i = 0; i < 3; i++) {
      const page = await raw(`${http.url}/answer/${token}`);
      expect(page.status).toBe(200);
      expect(page.headers['content-security-policy']).toMatch(/default-src 'none'/);
      expect(page.headers['content-security-policy']).not.toMatch(/script-src/);
      expect(page.body).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
      expect(page.body).toContain('Deploy v2 &amp; migrate?');
      expect(page.body.match(new RegExp(`<form method="post" action="/answer/${token}">`, 'g'))).toHaveLength(2);
      expect(page.body).toContain('<button type="submit">Wait &lt;1h&gt;</button>');
      expect(page.body).not.toMatch(/<script/i);
    }
    expect((await app.store.getQuestion(id))!.answer).toBeNull();
    expect((await app.store.auditHead()).seq).toBe(before);
  });
});

describe('POST /answer/<token>', () => {
  it('records the first answer (by link, via the channel); a later one is told who answered first, and when', async () => {
    const { id, token } = await question();
    clock += 1_000;
    const first = await post(token, 'Wait <1h>');
    expect(first.status).toBe(200);
    expect(first.body).toContain('You answered <strong>Wait &lt;1h&gt;</strong>');
    expect((await app.store.getQuestion(id))!.answer).toEqual({ choice: 'Wait <1h>', by: 'link', via: 'email', at: clock });
    const later = await post(token, 'Ship it');
    await refusedWith(later, 409, /answered <strong>Wait &lt;1h&gt;<\/strong> by link at <time datetime="2026-06-01T12:00:0/);
    await refusedWith(await raw(`${http.url}/answer/${token}`), 409, /Already answered/);
    expect((await app.store.getQuestion(id))!.answer!.choice).toBe('Wait <1h>');
  });

  it('refuses every bad request with its status and a page, and records nothing', async () => {
    const { id, token } = await question({ choices: ['Yes', 'No'], expires_in_s: 60 });
    const unknown = `${token.slice(0, 42)}${token.endsWith('A') ? 'B' : 'A'}`;
    await refusedWith(await raw(`${http.url}/answer/${unknown}`), 404, /Unknown link/);
    await refusedWith(await post(unknown, 'Yes'), 404, /Unknown link/, id);
    await refusedWith(await raw(`${http.url}/answer/not-a-token`), 404, /Unknown link/);
    await refusedWith(await post(token, 'Maybe'), 400, /not one of this question&#39;s choices \(Yes, No\)/, id);
    await refusedWith(await raw(`${http.url}/answer`, form('choice=Yes')), 400, /No answer link/, id);
    await refusedWith(await raw(`${http.url}/answer/`, form('choice=Yes')), 400, /No answer link/, id);
    await refusedWith(await raw(`${http.url}/answer/${token}`, form('')), 400, /No choice/, id);
    await refusedWith(await raw(`${http.url}/answer/${token}`, form('choice=')), 400, /No choice/, id);
    await refusedWith(await post(token, 'Yes', { Origin: 'https://evil.example' }), 403, /own answer page/, id);
    await refusedWith(await post(token, 'Yes', { Origin: 'null' }), 403, /own answer page/, id);
    await refusedWith(await post(token, 'Yes', { 'Sec-Fetch-Site': 'cross-site' }), 403, /own answer page/, id);
    await refusedWith(
      await raw(`${http.url}/answer/${token}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"choice":"Yes"}',
      }),
      415,
      /Not a form/,
      id,
    );
    await refusedWith(await raw(`${http.url}/answer/${token}`, { method: 'PUT', body: 'choice=Yes' }), 405, /does not answer/, id);
    // The page behind a proxy: its public origin is this page's too.
    clock += 60_000;
    await refusedWith(await post(token, 'Yes', { Origin: 'https://notify.example.com' }), 410, /Question closed/, id);
    await refusedWith(await raw(`${http.url}/answer/${token}`), 410, /Question closed/);
  });

  it('a question whose message has not left takes no answer', async () => {
    const call = {
      via: 'email',
      to: 'lead@example.com',
      subject: 'Later',
      body_html: '<p>x</p>',
      ask: {},
      send_at: new Date(clock + 3_600_000).toISOString(),
    };
    const { id } = await sendNotification(app, 'email', call, { client: 'bot' });
    const row = (await app.store.getQuestion(id))!;
    expect(row.choices).toEqual(['Acknowledge']);
    // Its token is the one the message will carry: derived again from the id.
    const { answerToken } = await import('../../src/core/answer-token.js');
    const token = answerToken(app.answerKey!, id, '');
    await refusedWith(await raw(`${http.url}/answer/${token}`), 409, /not been sent yet/);
    await refusedWith(await post(token, 'Acknowledge'), 409, /not been sent yet/, id);
  });
});
