/**
 * Issue 16, "Prove it": seeded generated calls through the real pipeline (an in-process app,
 * every channel live against loopback peers: smtp-server, a fake Twilio, a fake Slack).
 * Hostile arguments, and valid-looking calls at the edges of the rules. Every answer is a
 * result or a coded error; an acceptance that breaks a documented rule fails, and so does
 * anything reaching a provider that breaks one (recipient outside the allowlist, an SMS
 * over its segment, a Slack broadcast mention not neutralised).
 *
 * 2,000 calls in `npm test`; `npm run soak` runs 100,000 (FUZZ_RUNS).
 */
import { writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { ERROR_CODES } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { tempDataDir } from '../helpers/cli.js';
import { ALL_VALID } from '../helpers/examples.js';
import { startFakePeer, type FakePeer } from '../helpers/fakes.js';
import { startFakeTwilio, type FakeTwilio } from '../helpers/fake-twilio.js';
import { hostileArguments } from '../helpers/hostile-json.js';
import { assertProperty } from '../helpers/property.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

// The test harness may read the environment (only src/ may not).
const RUNS = Number(process.env.FUZZ_RUNS ?? 2_000);
const REPORT = process.env.FUZZ_REPORT;

const SMS_ALLOW = '+1415';
const SLACK_ID = 'C0FUZZ001';
const SLACK_NAME = '#ops';

// Written from the GSM 03.38 table, independently of src/channels/sms/segments.ts.
const GSM_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
const GSM_EXT = new Set('\f^{}\\[~]|€');

/** True when the body fits one SMS segment: 160 GSM-7 septets, else 70 UTF-16 units. */
function fitsOneSegment(body: string): boolean {
  let septets = 0;
  for (const ch of body) {
    if (GSM_BASIC.has(ch)) septets += 1;
    else if (GSM_EXT.has(ch)) septets += 2;
    else return body.length <= 70;
  }
  return septets <= 160;
}

const onAllowedDomain = (address: string) =>
  address.toLowerCase().endsWith('@example.com') && address.indexOf('@') === address.lastIndexOf('@');
/** A broadcast mention Slack would act on: `<!…>` other than a date. */
const LIVE_BROADCAST = /<\s*!(?!date\^)/i;

let app: App;
let smtp: TestSmtpServer;
let twilio: FakeTwilio;
let slack: FakePeer;

beforeAll(async () => {
  [smtp, twilio, slack] = await Promise.all([
    startSmtpServer(),
    startFakeTwilio(),
    startFakePeer({ status: 200, json: { ok: true, channel: SLACK_ID, ts: '1712345678.000100' } }),
  ]);
  app = await createApp(
    loadConfig({
      NOTIFY_DATA_DIR: tempDataDir('notify-fuzz-'),
      SMTP_URL: smtp.url,
      EMAIL_FROM: 'fuzz <fuzz@notify.test>',
      NOTIFY_EMAIL_ALLOW: 'example.com',
      TWILIO_ACCOUNT_SID: 'AC' + '7'.repeat(32),
      TWILIO_AUTH_TOKEN: 'fuzz-token',
      TWILIO_FROM: '+14155550100',
      TWILIO_API_URL: twilio.origin,
      NOTIFY_SMS_ALLOW: SMS_ALLOW,
      SLACK_BOT_TOKEN: 'xoxb-fuzz',
      SLACK_API_URL: slack.origin,
      NOTIFY_SLACK_ALLOW: `${SLACK_ID},${SLACK_NAME}`,
    }),
    silentLogger,
  );
});

afterAll(async () => {
  await app?.close();
  await Promise.all([smtp?.close(), twilio?.close(), slack?.close()]);
});

// --- valid-looking calls near the rules' edges ---
const gsmChar = fc.constantFrom(...'abcXYZ 019@£é_!?'.split(''), '€', '[', '~');
const ucsChar = fc.constantFrom('ж', 'ü', '中', '😀', 'ç', 'a');
const smsBody = fc.oneof(
  fc.string({ unit: gsmChar, minLength: 150, maxLength: 165 }),
  fc.string({ unit: ucsChar, minLength: 60, maxLength: 75 }),
  fc.string({ unit: fc.oneof(gsmChar, ucsChar), minLength: 1, maxLength: 170 }),
);
const phone = fc.oneof(
  fc.stringMatching(/^\+1415[0-9]{7}$/),
  fc.constantFrom('+14165550123', '+1 4155550123', '+141555501234567', '+1415', '+4415550123', '+14155550123\n'),
);
const address = fc.constantFrom(
  'ops@example.com',
  'OPS@EXAMPLE.COM',
  'a.b+tag@example.com',
  'x@sub.example.com',
  'x@example.com.evil.org',
  'x@evil.org',
  'Ops <ops@example.com>',
  'x@example.com, y@evil.org',
  '"a@example.com"@evil.org',
  'x@evil.org@example.com',
  ' ops@example.com',
);
const emailCall = fc.record(
  {
    via: fc.constant('email'),
    to: fc.oneof(address, fc.array(address, { minLength: 0, maxLength: 4 })),
    subject: fc.oneof(fc.constantFrom('x', 'x'.repeat(255), 'x'.repeat(256), ''), fc.string({ maxLength: 20 })),
    body_html: fc.constantFrom('<p>hi</p>', '', '<script>x</script>', 'plain'),
    reply_to: address,
    idempotency_key: fc.constantFrom('k1', 'k2', 'x'.repeat(128), 'x'.repeat(129)),
  },
  { requiredKeys: ['via', 'to', 'subject', 'body_html'] },
);
const smsCall = fc.record(
  { via: fc.constant('sms'), to: phone, body: smsBody, idempotency_key: fc.constantFrom('k1', 'k3') },
  { requiredKeys: ['via', 'to', 'body'] },
);
const mention = fc.constantFrom(
  '<!here>',
  '<!channel>',
  '<!everyone>',
  '< !here >',
  '<!HERE|here>',
  '<!subteam^S0123|@oncall>',
  '<<!channel>>',
  '<!date^1712345678^{date}|today>',
  '&lt;!here&gt;',
  '@here',
  '<@U0123>',
  '<!',
  '>',
);
const slackCall = fc.record(
  {
    via: fc.constant('slack'),
    channel: fc.constantFrom(SLACK_ID, 'c0fuzz001', SLACK_NAME, '#OPS', '#ops2', 'C0FUZZ0012', 'G0FUZZ001', '#ops ', 'ops'),
    text: fc.array(fc.oneof(mention, fc.string({ maxLength: 6 })), { minLength: 1, maxLength: 6 }).map((parts) => parts.join('')),
    thread: fc.constantFrom('1712345678.123456', '1712345678', 'x'),
    idempotency_key: fc.constantFrom('k1', 'k4'),
  },
  { requiredKeys: ['via', 'channel', 'text'] },
);

const FIELDS = ['via', 'to', 'subject', 'body_html', 'body_text', 'reply_to', 'body', 'channel', 'text', 'thread', 'idempotency_key'];
const anyCall = fc.oneof(
  { arbitrary: emailCall, weight: 3 },
  { arbitrary: smsCall, weight: 3 },
  { arbitrary: slackCall, weight: 3 },
  { arbitrary: hostileArguments(ALL_VALID, FIELDS), weight: 3 },
);

const outcomes: Record<string, number> = {};
const VALID_CODES = new Set<string>(ERROR_CODES);

/** What reached the providers since the given counts, checked against the rules. */
function checkProviders(since: { smtp: number; twilio: number; slack: number }): void {
  for (const mail of smtp.received.slice(since.smtp)) {
    for (const to of mail.to) expect(onAllowedDomain(to), `SMTP recipient ${to}`).toBe(true);
    const replyTo = /^Reply-To: (.*)$/im.exec(mail.raw)?.[1] ?? '';
    for (const a of replyTo.match(/[^\s<>,"]+@[^\s<>,"]+/g) ?? []) expect(onAllowedDomain(a), `Reply-To ${a}`).toBe(true);
  }
  for (const req of twilio.requests.slice(since.twilio)) {
    expect(req.form.To?.startsWith(SMS_ALLOW), `Twilio To ${req.form.To}`).toBe(true);
    expect(fitsOneSegment(req.form.Body ?? ''), `Twilio Body ${JSON.stringify(req.form.Body)}`).toBe(true);
  }
  for (const req of slack.requests.slice(since.slack)) {
    const body = (req.headers['content-type'] ?? '').includes('json') ? (JSON.parse(req.body) as Record<string, string>) : req.form;
    expect([SLACK_ID, SLACK_NAME].includes(body.channel ?? ''), `Slack channel ${body.channel}`).toBe(true);
    expect(LIVE_BROADCAST.test(body.text ?? ''), `Slack text ${JSON.stringify(body.text)}`).toBe(false);
  }
}

/** An accepted call must satisfy every documented rule of its branch. */
function checkAccepted(args: Record<string, unknown>): void {
  if (args.via === 'sms') {
    expect(String(args.to).startsWith(SMS_ALLOW)).toBe(true);
    expect(fitsOneSegment(String(args.body)), `accepted SMS body ${JSON.stringify(args.body)}`).toBe(true);
  } else if (args.via === 'email') {
    for (const a of [args.to, args.reply_to].flat().filter((x) => x !== undefined && x !== null)) {
      // A display name may come with the address (`Ops <ops@example.com>`): the address alone is judged.
      const address = /<([^<>]*)>\s*$/.exec(String(a))?.[1] ?? String(a);
      expect(onAllowedDomain(address), `accepted email address ${JSON.stringify(a)}`).toBe(true);
    }
    expect(String(args.subject).length).toBeLessThanOrEqual(255);
  } else if (args.via === 'slack') {
    const ch = String(args.channel);
    expect(ch === SLACK_ID || ch.toLowerCase() === SLACK_NAME, `accepted Slack channel ${ch}`).toBe(true);
  }
}

it(`${RUNS} seeded generated calls through the live pipeline: coded answers, no rule broken`, async () => {
  const entry = app.catalog.flat.entries.get('send_notification')!;
  await assertProperty(
    'fuzz through the pipeline',
    fc.asyncProperty(anyCall, async (args) => {
      const since = { smtp: smtp.received.length, twilio: twilio.requests.length, slack: slack.requests.length };
      const result = await entry.call(args, {
        deps: app,
        store: app.store,
        config: app.config,
        log: silentLogger,
        client: 'fuzz',
        now: app.now,
        signal: new AbortController().signal,
      });
      const sc = result.structuredContent as { error?: { code?: string }; status?: string; replayed?: boolean } | undefined;
      if (result.isError) {
        const code = sc?.error?.code ?? 'UNCODED';
        outcomes[code] = (outcomes[code] ?? 0) + 1;
        expect(VALID_CODES.has(code), `error code ${code}`).toBe(true);
        // A refused call reaches no provider.
        if (!code.startsWith('PROVIDER_') && code !== 'DELIVERY_UNKNOWN' && code !== 'RATE_LIMITED') {
          expect(smtp.received.length + twilio.requests.length + slack.requests.length).toBe(since.smtp + since.twilio + since.slack);
        }
      } else {
        const key = sc?.replayed ? 'sent (replayed)' : `${sc?.status}`;
        outcomes[key] = (outcomes[key] ?? 0) + 1;
        expect(sc?.status).toBe('sent');
        checkAccepted(args as Record<string, unknown>);
      }
      checkProviders(since);
    }),
    { numRuns: RUNS },
  );
  if (REPORT)
    writeFileSync(
      REPORT,
      JSON.stringify(
        {
          answers_by_outcome: outcomes,
          provider_requests: { smtp: smtp.received.length, twilio: twilio.requests.length, slack: slack.requests.length },
        },
        null,
        2,
      ),
    );
  expect(Object.keys(outcomes).length).toBeGreaterThan(3);
}, 0);
