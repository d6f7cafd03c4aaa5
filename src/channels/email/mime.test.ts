import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { parseMime } from '../../../test/helpers/mime.js';
import { NotifyError } from '../../core/errors.js';
import { EmailMimeBuilder, INLINE_MAX_CHARS, buildEmailMime, plainEmailMime, type MailParts } from './mime.js';
import { loadHtmlToText } from './html-to-text.js';

/** Nesting this deep keeps html-to-text busy for many seconds (its parser is quadratic in depth). */
const STALLING_HTML = '<b>'.repeat(300_000);

const mail = (extra: Partial<MailParts> = {}): MailParts => ({
  from: 'notify@example.com',
  to: ['ops@example.com', 'oncall@example.com'],
  subject: 'Déploiement',
  html: '<h1>Deploy</h1><p>See <a href="https://ci.example/42">the run</a> &amp; <b>logs</b>.</p>',
  messageId: '<ntf_1@example.com>',
  headers: { 'X-Notification-Id': 'ntf_1' },
  ...extra,
});

async function caught(p: Promise<unknown>): Promise<NotifyError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NotifyError);
  return err as NotifyError;
}

/** A good notification of 36 KB: a table of hosts with links and emphasis. */
const GOOD_36K = `<h1>Disk report</h1><table>${'<tr><td><a href="https://ops.example/db-1">db-1</a></td><td>Disk <b>91%</b> &amp; rising</td></tr>'.repeat((36 * 1024) / 104)}</table>`;

async function expectGood(raw: string): Promise<void> {
  const text = parseMime(raw).parts[0]!.body.replace(/\r\n/g, '\n').trim();
  expect(text).toBe((await loadHtmlToText())(GOOD_36K));
  expect(text).toContain('91% & rising');
}

/** Synchronous work on this thread for `ms`: the event loop serves nothing meanwhile. */
function holdEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

/** Processes that each keep a core busy, two per core: a machine loaded well past its capacity. */
function saturateCpu(): ChildProcess[] {
  return Array.from({ length: 2 * availableParallelism() }, () => spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' }));
}

describe('buildEmailMime', () => {
  let builder: EmailMimeBuilder | undefined;
  afterEach(async () => {
    await builder?.close();
    builder = undefined;
  });

  // A small email is built in this thread, a large one in a worker: the same message either way.
  const LARGE_HTML = mail().html + '<p>Disk 91% on <a href="https://ops.example/db-1">db-1</a></p>'.repeat(INLINE_MAX_CHARS / 40);
  expect(LARGE_HTML.length).toBeGreaterThan(INLINE_MAX_CHARS);

  it.each([
    ['small', mail().html],
    ['large', LARGE_HTML],
  ])('builds multipart/alternative with the text part derived by html-to-text (%s)', async (_, html) => {
    const m = mail({ html });
    const parsed = parseMime(await buildEmailMime(m, { timeoutMs: 10_000 }));
    expect(parsed.type).toBe('multipart/alternative');
    expect(parsed.header('message-id')).toBe('<ntf_1@example.com>');
    expect(parsed.header('x-notification-id')).toBe('ntf_1');
    expect(parsed.header('to')).toBe('ops@example.com, oncall@example.com');
    const [textPart, htmlPart] = parsed.parts;
    expect(textPart!.type).toBe('text/plain');
    expect(textPart!.body.replace(/\r\n/g, '\n').trim()).toBe((await loadHtmlToText())(m.html));
    expect(htmlPart!.type).toBe('text/html');
    expect(htmlPart!.body).toContain('<a href="https://ci.example/42">');
  });

  it.each([
    ['small', mail().html],
    ['large', LARGE_HTML],
  ])('keeps a body_text the caller sent (%s)', async (_, html) => {
    const parsed = parseMime(await buildEmailMime(mail({ html, text: 'Mine, word for word.' }), { timeoutMs: 10_000 }));
    expect(parsed.parts[0]!.body.trim()).toBe('Mine, word for word.');
  });

  it('answers INVALID_FIELD for a small body the converter cannot take, without a worker', async () => {
    // Small enough to be built inline; html-to-text is given no chance to fail on real input,
    // so this checks the mapping with an html that is not a string.
    const err = await caught(buildEmailMime(mail({ html: { length: 1 } as unknown as string }), { timeoutMs: 10_000 }));
    expect(err.code).toBe('INVALID_FIELD');
    expect(err.message).toMatch(/the converter failed/);
  });

  it('answers INVALID_FIELD naming body_text when deriving the text part takes more CPU than allowed', async () => {
    // A small CPU limit and a wall clock to spare: refused for the work, however busy the machine.
    builder = new EmailMimeBuilder(1, 300);
    const err = await caught(builder.build(mail({ html: STALLING_HTML }), { timeoutMs: 120_000 }));
    expect(err.code).toBe('INVALID_FIELD');
    expect(err.message).toMatch(/more than 300 ms of CPU/);
    expect(err.details.via).toBe('email');
    expect(err.message).toMatch(/^body_html could not be turned into the plain-text part .*Send body_text with it/);
    // The same HTML with a body_text needs no conversion.
    const raw = await builder.build(mail({ html: STALLING_HTML, text: 'plain' }), { timeoutMs: 10_000 });
    expect(parseMime(raw).parts[0]!.body.trim()).toBe('plain');
  }, 150_000);

  it('refuses the same hostile HTML with the default CPU limit', async () => {
    builder = new EmailMimeBuilder(1);
    const err = await caught(builder.build(mail({ html: STALLING_HTML }), { timeoutMs: 120_000 }));
    expect(err.code).toBe('INVALID_FIELD');
    expect(err.message).toMatch(/more than 3000 ms of CPU/);
  }, 150_000);

  it('builds a good email whose first worker starts while the event loop is held past the run limit', async () => {
    // As the pipeline calls it with a 3 s send budget. The worker starts and could convert in
    // the meantime; its start-up is no part of the job, and a late timer is no verdict.
    builder = new EmailMimeBuilder(1);
    const built = builder.build(mail({ html: GOOD_36K }), { timeoutMs: 1_500 });
    holdEventLoop(1_600);
    await expectGood(await built);
  });

  it('never refuses a good email as INVALID_FIELD while every core is taken, and builds it within a send budget', async () => {
    const hogs = saturateCpu();
    try {
      builder = new EmailMimeBuilder(1);
      // As the pipeline calls it with a 3 s send budget: how long the busy box takes is not the
      // mail's fault, so the answer is the message or a transient error: PROVIDER_UNAVAILABLE
      // (its build ran out of time) or, behind a build that did, RATE_LIMITED (no worker freed in time).
      for (let i = 0; i < 2; i++) {
        const outcome = await builder.build(mail({ html: GOOD_36K }), { timeoutMs: 1_500 }).then(
          (raw) => ({ raw }),
          (err: NotifyError) => ({ code: err.code }),
        );
        if ('raw' in outcome) await expectGood(outcome.raw);
        else expect(['PROVIDER_UNAVAILABLE', 'RATE_LIMITED']).toContain(outcome.code);
      }
      // With the default 20 s budget's half, the same mail is built, hogs still running.
      await expectGood(await builder.build(mail({ html: GOOD_36K }), { timeoutMs: 10_000 }));
    } finally {
      for (const hog of hogs) hog.kill('SIGKILL');
    }
  });

  it('answers RATE_LIMITED with retry_after_s when every worker stayed busy past the deadline', async () => {
    builder = new EmailMimeBuilder(1, 1_000);
    const stalled = caught(builder.build(mail({ html: STALLING_HTML }), { timeoutMs: 120_000 }));
    const waiting = await caught(builder.build(mail({ html: LARGE_HTML }), { timeoutMs: 600 }));
    expect(waiting.code).toBe('RATE_LIMITED');
    expect(waiting.details.retryAfterS).toBe(1);
    expect((await stalled).code).toBe('INVALID_FIELD');
  }, 150_000);

  it('does not hold an email that brings its body_text behind a stalled conversion', async () => {
    builder = new EmailMimeBuilder(1, 1_000);
    const stalled = caught(builder.build(mail({ html: STALLING_HTML }), { timeoutMs: 120_000 }));
    const raw = await builder.build(mail({ html: LARGE_HTML, text: 'brought along' }), { timeoutMs: 6_000 });
    expect(parseMime(raw).parts[0]!.body.trim()).toBe('brought along');
    await stalled;
  }, 150_000);
});

describe('plainEmailMime', () => {
  // Fixed Date and boundary, as the channel gives them, so the two builds compare byte for byte.
  const common = mail({
    subject: 'Deploy done',
    html: '<p>Deployed <b>v1.2</b></p>',
    date: new Date(0),
    baseBoundary: '0123456789abcdef0123456789abcdef',
  });

  it('writes the common notification as buildEmailMime does, without a promise', async () => {
    for (const m of [common, { ...common, text: 'Deployed v1.2, by hand.' }]) {
      const raw = plainEmailMime(m);
      expect(raw).toBeDefined();
      expect(raw).toBe(await buildEmailMime(m, { timeoutMs: 10_000 }));
    }
  });

  it.each([
    ['HTML whose text part html-to-text derives', { html: mail().html }],
    ['a non-ASCII subject', { subject: 'Déploiement' }],
    // Short lines: plainMime would take it, the size alone sends it on.
    ['a body over INLINE_MAX_CHARS', { html: '<p>x</p>', text: `${'x'.repeat(70)}\n`.repeat(INLINE_MAX_CHARS / 70) }],
  ])('leaves to buildEmailMime %s', (_, extra) => {
    expect(plainEmailMime({ ...common, ...extra })).toBeUndefined();
  });
});
