/**
 * Live sends end to end: the built CLI over stdio, driven by the SDK's Client, with every
 * channel live against real protocol peers started here: smtp-server for email, Prism
 * serving Twilio's and Slack's own API descriptions, and small fakes for what Prism cannot
 * answer (Twilio 21610) or cannot count (requests that must never be made).
 *
 * Two servers run side by side:
 * - `live`: email to smtp-server, SMS and Slack to Prism (those two skip without the specs);
 * - `guarded`: email to the same smtp-server, SMS to a fake Twilio, Slack to a counting
 *   fake: recipient policy and opt-outs, where "nothing was sent" can be counted.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, tempDataDir } from '../helpers/cli.js';
import { startFakePeer, type FakePeer } from '../helpers/fakes.js';
import { startFakeTwilio, type FakeTwilio } from '../helpers/fake-twilio.js';
import { assertBuilt, connectCli, errorOf, readOutbox, type CliSession, type ToolOutcome } from '../helpers/mcp-cli.js';
import { parseMime } from '../helpers/mime.js';
import { prismUnavailableReason, startPrism, type PrismPeer } from '../helpers/prism.js';
import { SMTP_PASS, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const SID = 'AC' + '1'.repeat(32);
const TWILIO_TOKEN = 'e2e-twilio-auth-token';
const SLACK_TOKEN = 'xoxb-e2e-slack-secret';
const FROM_ADDRESS = 'alerts@notify.test';
const OPTED_OUT = '+14155550199';

const prismSkip = prismUnavailableReason();
const describePrism = prismSkip ? describe.skip : describe;
const skipNote = prismSkip ? ` [skipped: ${prismSkip}]` : '';

let smtp: TestSmtpServer;
let prismTwilio: PrismPeer | undefined;
let prismSlack: PrismPeer | undefined;
let fakeTwilio: FakeTwilio;
let fakeSlack: FakePeer;
let live: CliSession;
let guarded: CliSession;
let liveEnv: Record<string, string>;
let guardedEnv: Record<string, string>;
const dataDirs: string[] = [];

function dataDir(): string {
  const dir = tempDataDir('notify-e2e-live-');
  dataDirs.push(dir);
  return dir;
}

type Sc = Record<string, unknown>;
const sc = (r: ToolOutcome) => r.structuredContent as Sc;
const send = (s: CliSession, args: Sc) => s.client.callTool({ name: 'send_notification', arguments: args }) as Promise<ToolOutcome>;

beforeAll(async () => {
  assertBuilt();
  [smtp, fakeTwilio, fakeSlack, prismTwilio, prismSlack] = await Promise.all([
    startSmtpServer(),
    startFakeTwilio([OPTED_OUT]),
    startFakePeer({ status: 200, json: { ok: true, channel: 'C0FAKE001', ts: '1712345678.000200' } }),
    prismSkip ? undefined : startPrism('twilio'),
    prismSkip ? undefined : startPrism('slack'),
  ]);
  const email = { SMTP_URL: smtp.url, EMAIL_FROM: `notify-mcp <${FROM_ADDRESS}>`, NOTIFY_EMAIL_ALLOW: 'example.com' };
  const twilio = (origin: string) => ({
    TWILIO_ACCOUNT_SID: SID,
    TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
    TWILIO_FROM: '+14155550111',
    TWILIO_API_URL: origin,
    NOTIFY_SMS_ALLOW: '+1415,+7',
  });
  const slack = (origin: string) => ({ SLACK_BOT_TOKEN: SLACK_TOKEN, SLACK_API_URL: origin, NOTIFY_SLACK_ALLOW: 'C0123ABCD,#ops-alerts' });

  liveEnv = cliEnv({
    NOTIFY_DATA_DIR: dataDir(),
    NOTIFY_SMS_MAX_SEGMENTS: '3',
    ...email,
    ...(prismTwilio ? twilio(prismTwilio.origin) : {}),
    ...(prismSlack ? slack(prismSlack.origin) : {}),
  });
  guardedEnv = cliEnv({ NOTIFY_DATA_DIR: dataDir(), ...email, ...twilio(fakeTwilio.origin), ...slack(fakeSlack.origin) });
  [live, guarded] = await Promise.all([connectCli(liveEnv, 'e2e-live'), connectCli(guardedEnv, 'e2e-guarded')]);
});

afterAll(async () => {
  await Promise.allSettled([live?.close(), guarded?.close()]);
  await Promise.allSettled([smtp?.close(), fakeTwilio?.close(), fakeSlack?.close(), prismTwilio?.stop(), prismSlack?.stop()]);
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

describe('email, live through smtp-server', () => {
  it('sends a multipart/alternative mail carrying the notification id, and logs the delivery', async () => {
    const before = smtp.received.length;
    smtp.replies.push({ kind: 'ok', queueId: 'Q1E2E3' });
    const result = await send(live, {
      via: 'email',
      to: 'ops@example.com',
      subject: 'Deploy done',
      body_html: '<p>Deployed <b>v1.2</b> to <a href="https://status.example.com">prod</a></p>',
      reply_to: 'oncall@example.com',
    });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    const out = sc(result);
    expect(out).toMatchObject({ via: 'email', status: 'sent', provider: 'smtp', provider_message_id: 'Q1E2E3' });
    expect(out.id).toMatch(/^ntf_[0-9a-f]{32}$/);

    expect(smtp.received.length).toBe(before + 1);
    const mail = smtp.received.at(-1)!;
    expect(mail.user).toBe('notify');
    expect(mail.from).toBe(FROM_ADDRESS);
    expect(mail.to).toEqual(['ops@example.com']);

    const mime = parseMime(mail.raw);
    expect(mime.header('x-notification-id')).toBe(out.id);
    expect(mime.header('message-id')).toContain(String(out.id));
    expect(mime.header('subject')).toBe('Deploy done');
    expect(mime.header('to')).toBe('ops@example.com');
    expect(mime.header('reply-to')).toBe('oncall@example.com');
    expect(mime.type).toBe('multipart/alternative');
    expect(mime.parts.map((p) => p.type)).toEqual(['text/plain', 'text/html']);
    const [text, html] = mime.parts as [ReturnType<typeof parseMime>, ReturnType<typeof parseMime>];
    expect(html.body).toContain('<b>v1.2</b>');
    // derived from body_html: words kept, tags gone, the link's target kept
    expect(text.body).toContain('Deployed v1.2 to prod (https://status.example.com)');
    expect(text.body).not.toMatch(/<[a-z/]/i);

    const record = (await readOutbox(liveEnv)).find((r) => r.id === out.id);
    expect(record).toMatchObject({ via: 'email', status: 'sent', provider: 'smtp', provider_message_id: 'Q1E2E3', error_code: null });
    expect(record!.attempts).toBeGreaterThanOrEqual(1);
    expect(record!.client).toBe('e2e-live');
  });

  it('sends one mail to a list of recipients, each on the envelope', async () => {
    const before = smtp.received.length;
    const result = await send(live, {
      via: 'email',
      to: ['a@example.com', 'b@example.com'],
      subject: 'Two',
      body_html: '<p>hi</p>',
      body_text: 'hi, in plain words',
    });
    expect(sc(result)).toMatchObject({ status: 'sent', provider: 'smtp' });
    expect(smtp.received.length).toBe(before + 1);
    expect(smtp.received.at(-1)!.to).toEqual(['a@example.com', 'b@example.com']);
    const text = parseMime(smtp.received.at(-1)!.raw).parts.find((p) => p.type === 'text/plain')!;
    expect(text.body.trim()).toBe('hi, in plain words');
  });
});

describePrism(`sms, live through the twilio client against Prism (Twilio's spec)${skipNote}`, () => {
  it.each([
    { body: 'Disk full on db-1', to: '+14155550123', segments: 1, encoding: 'GSM-7' },
    { body: 'Диск заполнен', to: '+79001234567', segments: 1, encoding: 'UCS-2' },
    { body: 'x'.repeat(200), to: '+14155550123', segments: 2, encoding: 'GSM-7' },
  ])('sends $encoding in $segments segment(s) and logs the delivery', async ({ body, to, segments, encoding }) => {
    const result = await send(live, { via: 'sms', to, body });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    const out = sc(result);
    expect(out).toMatchObject({ via: 'sms', status: 'sent', provider: 'twilio', segments, encoding });
    expect(out.provider_message_id).toMatch(/^SM[0-9a-f]{32}$/i);

    const record = (await readOutbox(liveEnv)).find((r) => r.id === out.id);
    expect(record).toMatchObject({ via: 'sms', status: 'sent', provider: 'twilio', provider_message_id: out.provider_message_id });
    expect(record!.attempts).toBeGreaterThanOrEqual(1);
    expect(record!.payload).toEqual({ To: to, Body: body, From: '+14155550111' });
  });
});

describePrism(`slack, live through @slack/web-api against Prism (Slack's spec)${skipNote}`, () => {
  it.each([
    { channel: 'C0123ABCD', text: 'Deploy finished' },
    { channel: '#ops-alerts', text: 'still failing', thread: '1712345678.123456' },
  ])('posts to $channel and logs the delivery', async (args) => {
    const result = await send(live, { via: 'slack', ...args });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    const out = sc(result);
    expect(out).toMatchObject({ via: 'slack', status: 'sent', provider: 'slack' });
    expect(out.provider_message_id).toMatch(/^\d+\.\d+$/);

    const record = (await readOutbox(liveEnv)).find((r) => r.id === out.id);
    expect(record).toMatchObject({ via: 'slack', status: 'sent', provider: 'slack', provider_message_id: out.provider_message_id });
    expect(record!.attempts).toBeGreaterThanOrEqual(1);
  });
});

describe('recipients outside the allowlist: RECIPIENT_NOT_ALLOWED, nothing sent', () => {
  it('email: a foreign domain, alone or in a list with an allowed one, reaches no SMTP server', async () => {
    const [received, data] = [smtp.received.length, smtp.dataCount()];
    for (const to of ['intruder@attacker.example', ['ops@example.com', 'exfil@attacker.example']]) {
      const error = errorOf(await send(guarded, { via: 'email', to, subject: 'secrets', body_html: '<p>data</p>' }));
      expect(error).toMatchObject({ code: 'RECIPIENT_NOT_ALLOWED', via: 'email' });
      expect(error.message).toContain('NOTIFY_EMAIL_ALLOW');
    }
    expect(smtp.received.length).toBe(received);
    expect(smtp.dataCount()).toBe(data);
  });

  it('slack: a channel not on the list makes no request (the fake counts); an allowed one does', async () => {
    const before = fakeSlack.requests.length;
    const error = errorOf(await send(guarded, { via: 'slack', channel: '#random', text: 'hello' }));
    expect(error).toMatchObject({ code: 'RECIPIENT_NOT_ALLOWED', via: 'slack' });
    expect(error.message).toContain('NOTIFY_SLACK_ALLOW');
    expect(fakeSlack.requests.length).toBe(before);

    // the control: the same server does reach the fake for an allowed channel
    const ok = await send(guarded, { via: 'slack', channel: 'C0123ABCD', text: 'hello' });
    expect(sc(ok)).toMatchObject({ status: 'sent', provider: 'slack', provider_message_id: '1712345678.000200' });
    expect(fakeSlack.requests.length).toBe(before + 1);
    expect(fakeSlack.requests.at(-1)!.headers.authorization).toBe(`Bearer ${SLACK_TOKEN}`);
  });

  it('sms: a number outside the prefixes makes no request', async () => {
    const before = fakeTwilio.requests.length;
    const error = errorOf(await send(guarded, { via: 'sms', to: '+442071838750', body: 'hello' }));
    expect(error).toMatchObject({ code: 'RECIPIENT_NOT_ALLOWED', via: 'sms' });
    expect(error.message).toContain('NOTIFY_SMS_ALLOW');
    expect(fakeTwilio.requests.length).toBe(before);
  });

  it('leaves no delivery record for a refused recipient', async () => {
    const records = await readOutbox(guardedEnv);
    const recipients = JSON.stringify(records.map((r) => r.payload));
    expect(recipients).not.toContain('attacker.example');
    expect(recipients).not.toContain('#random');
    expect(recipients).not.toContain('+442071838750');
  });
});

describe('Twilio 21610 (the recipient replied STOP)', () => {
  it('answers RECIPIENT_OPTED_OUT, then remembers it: the next send makes no request', async () => {
    const before = fakeTwilio.requests.length;
    const first = errorOf(await send(guarded, { via: 'sms', to: OPTED_OUT, body: 'first' }));
    expect(first).toMatchObject({ code: 'RECIPIENT_OPTED_OUT', via: 'sms' });
    expect(fakeTwilio.requests.length).toBe(before + 1);
    expect(fakeTwilio.requests.at(-1)!.form).toMatchObject({ To: OPTED_OUT, Body: 'first' });

    const second = errorOf(await send(guarded, { via: 'sms', to: OPTED_OUT, body: 'second' }));
    expect(second).toMatchObject({ code: 'RECIPIENT_OPTED_OUT', via: 'sms' });
    expect(fakeTwilio.requests.length).toBe(before + 1);

    // per number: another allowed number still goes out through the same fake
    const other = await send(guarded, { via: 'sms', to: '+14155550123', body: 'third' });
    expect(sc(other)).toMatchObject({ status: 'sent', provider: 'twilio', provider_message_id: expect.stringMatching(/^SM\d{32}$/) });
    expect(fakeTwilio.requests.length).toBe(before + 2);

    const records = await readOutbox(guardedEnv);
    const failed = records.filter((r) => r.via === 'sms' && r.status === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ error_code: 'RECIPIENT_OPTED_OUT', attempts: 1, provider: 'twilio' });
  });

  it('still knows after a restart (the opt-out is in the store)', async () => {
    const before = fakeTwilio.requests.length;
    const again = await connectCli(guardedEnv, 'e2e-restarted');
    try {
      const result = (await again.client.callTool({
        name: 'send_notification',
        arguments: { via: 'sms', to: OPTED_OUT, body: 'after restart' },
      })) as ToolOutcome;
      expect(errorOf(result)).toMatchObject({ code: 'RECIPIENT_OPTED_OUT' });
      expect(fakeTwilio.requests.length).toBe(before);
    } finally {
      await again.close();
    }
  });
});

describe('a live channel without its allowlist', () => {
  it.each<{ variable: string; env: Record<string, string> }>([
    { variable: 'NOTIFY_EMAIL_ALLOW', env: { SMTP_URL: 'smtp://u:p@127.0.0.1:2525', EMAIL_FROM: FROM_ADDRESS } },
    { variable: 'NOTIFY_SMS_ALLOW', env: { TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, TWILIO_FROM: '+14155550111' } },
    { variable: 'NOTIFY_SLACK_ALLOW', env: { SLACK_BOT_TOKEN: SLACK_TOKEN } },
  ])('refuses to start (exit 2) and names $variable', async ({ variable, env }) => {
    const dir = dataDir();
    const { code, stdout, stderr } = await runCli([], cliEnv({ NOTIFY_DATA_DIR: dir, ...env }));
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`set ${variable}`);
  });

  it('starts when the variable is set, even empty (which allows no one)', async () => {
    const env = cliEnv({
      NOTIFY_DATA_DIR: dataDir(),
      SLACK_BOT_TOKEN: SLACK_TOKEN,
      SLACK_API_URL: fakeSlack.origin,
      NOTIFY_SLACK_ALLOW: '',
    });
    const session = await connectCli(env, 'e2e-empty-allow');
    try {
      const before = fakeSlack.requests.length;
      const error = errorOf(
        (await session.client.callTool({
          name: 'send_notification',
          arguments: { via: 'slack', channel: 'C0123ABCD', text: 'x' },
        })) as ToolOutcome,
      );
      expect(error.code).toBe('RECIPIENT_NOT_ALLOWED');
      expect(fakeSlack.requests.length).toBe(before);
    } finally {
      await session.close();
    }
  });
});

describe('what the live servers wrote', () => {
  it('kept secrets and message bodies out of the logs, and stdout to JSON-RPC', () => {
    for (const session of [live, guarded]) {
      const stderr = session.transport.stderr;
      expect(stderr.length).toBeGreaterThan(0);
      for (const secret of [SMTP_PASS, TWILIO_TOKEN, SLACK_TOKEN, 'Deployed', 'Диск', 'still failing', 'after restart']) {
        expect(stderr).not.toContain(secret);
      }
      for (const line of stderr.trim().split('\n')) expect(() => JSON.parse(line), line).not.toThrow();
      for (const line of session.transport.stdoutLines) expect(JSON.parse(line)).toHaveProperty('jsonrpc', '2.0');
    }
  });
});
