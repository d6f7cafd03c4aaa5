/**
 * "Nothing sent that policy refuses", end to end: the built CLI over stdio with every
 * channel live against peers that count what reaches them (smtp-server, a fake Twilio, a
 * counting Slack fake). Each refusal is checked where it matters: at the provider, which
 * must see nothing, and in the log, which must say who was refused and never the body.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, tempDataDir } from '../helpers/cli.js';
import { startFakePeer, type FakePeer, type FakeRequest } from '../helpers/fakes.js';
import { startFakeTwilio, type FakeTwilio } from '../helpers/fake-twilio.js';
import { connectCli, errorOf, type CliSession, type ToolOutcome } from '../helpers/mcp-cli.js';
import { parseMime } from '../helpers/mime.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const CLIENT = 'e2e-policy';
const SECRET_BODY = 'quarterly-numbers-7f3a';
const WJ = '\u2060';

let smtp: TestSmtpServer;
let twilio: FakeTwilio;
let slack: FakePeer;
let guarded: CliSession;
let broadcasting: CliSession;
const dirs: string[] = [];

function env(extra: Record<string, string> = {}): Record<string, string> {
  const dir = tempDataDir('notify-e2e-policy-');
  dirs.push(dir);
  return cliEnv({
    NOTIFY_DATA_DIR: dir,
    SMTP_URL: smtp.url,
    EMAIL_FROM: 'notify-mcp <alerts@notify.test>',
    NOTIFY_EMAIL_ALLOW: 'example.com',
    TWILIO_ACCOUNT_SID: 'AC' + '2'.repeat(32),
    TWILIO_AUTH_TOKEN: 'e2e-policy-twilio-token',
    TWILIO_FROM: '+14155550111',
    TWILIO_API_URL: twilio.origin,
    NOTIFY_SMS_ALLOW: '+1415',
    NOTIFY_SMS_MAX_SEGMENTS: '2',
    SLACK_BOT_TOKEN: 'xoxb-e2e-policy',
    SLACK_API_URL: slack.origin,
    NOTIFY_SLACK_ALLOW: 'C0123ABCD,#Ops-Alerts',
    ...extra,
  });
}

const send = (s: CliSession, args: Record<string, unknown>) =>
  s.client.callTool({ name: 'send_notification', arguments: args }) as Promise<ToolOutcome>;

/** The text chat.postMessage carried, form-encoded or JSON. */
function postedText(req: FakeRequest): string | undefined {
  return req.form.text ?? (JSON.parse(req.body || '{}') as { text?: string }).text;
}

/** The JSON lines the server logged so far: none yet is possible, as stdio answers its opening requests before the server has loaded. */
function logLines(s: CliSession): Record<string, unknown>[] {
  return s.transport.stderr
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

beforeAll(async () => {
  [smtp, twilio, slack] = await Promise.all([
    startSmtpServer(),
    startFakeTwilio(),
    startFakePeer({ status: 200, json: { ok: true, channel: 'C0123ABCD', ts: '1712345678.000300' } }),
  ]);
  [guarded, broadcasting] = await Promise.all([
    connectCli(env(), CLIENT),
    connectCli(env({ NOTIFY_SLACK_ALLOW_BROADCAST: '1' }), `${CLIENT}-broadcast`),
  ]);
});

afterAll(async () => {
  await Promise.allSettled([guarded?.close(), broadcasting?.close()]);
  await Promise.allSettled([smtp?.close(), twilio?.close(), slack?.close()]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('email: reply_to is a recipient', () => {
  it('refuses a reply_to off the allowlist: nothing reaches the SMTP server, and the refusal is logged', async () => {
    const [received, data] = [smtp.received.length, smtp.dataCount()];
    const refusals = () => logLines(guarded).filter((l) => l.msg === 'send refused');
    const before = refusals().length;
    const error = errorOf(
      await send(guarded, {
        via: 'email',
        to: 'ops@example.com',
        reply_to: 'exfil@attacker.example',
        subject: 'numbers',
        body_html: `<p>${SECRET_BODY}</p>`,
      }),
    );
    expect(error).toMatchObject({ code: 'RECIPIENT_NOT_ALLOWED', via: 'email' });
    expect(error.message).toContain('exfil@attacker.example');
    expect(smtp.received.length).toBe(received);
    expect(smtp.dataCount()).toBe(data);

    // Log lines leave after the answer (src/core/log.ts): wait for this one.
    for (let waited = 0; refusals().length === before && waited < 2_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    const refused = refusals();
    expect(refused.at(-1)).toMatchObject({
      level: 'warn',
      code: 'RECIPIENT_NOT_ALLOWED',
      tool: 'send_notification',
      client: CLIENT,
      via: 'email',
    });
    // Each recipient by its class (the domain), never the address.
    expect(refused.at(-1)!.recipients).toEqual(['@example.com', '@attacker.example']);
    expect(JSON.stringify(refused.at(-1))).not.toContain('exfil@');
    expect(guarded.transport.stderr).not.toContain(SECRET_BODY);
  });

  it('sends with an allowed reply_to, carried in Reply-To and not on the envelope', async () => {
    const before = smtp.received.length;
    const result = await send(guarded, {
      via: 'email',
      to: 'ops@example.com',
      reply_to: 'oncall@EXAMPLE.com',
      subject: 'numbers',
      body_html: '<p>ok</p>',
    });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(smtp.received.length).toBe(before + 1);
    const mail = smtp.received.at(-1)!;
    expect(mail.to).toEqual(['ops@example.com']);
    expect(parseMime(mail.raw).header('reply-to')).toBe('oncall@example.com'); // nodemailer writes the domain in its ASCII form
  });
});

describe('slack: broadcast mentions and the allowlist', () => {
  it('posts a broadcast mention neutralised by default: it reaches the Slack fake as inert text', async () => {
    const before = slack.requests.length;
    const result = await send(guarded, {
      via: 'slack',
      channel: 'C0123ABCD',
      text: '<!channel> db-1 down, <!here|here> and @everyone look',
    });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(slack.requests.length).toBe(before + 1);
    expect(postedText(slack.requests.at(-1)!)).toBe(`@${WJ}channel db-1 down, @${WJ}here and @${WJ}everyone look`);
  });

  it('posts it as written when the operator set NOTIFY_SLACK_ALLOW_BROADCAST=1, and each server says so in its tool description', async () => {
    const before = slack.requests.length;
    const result = await send(broadcasting, { via: 'slack', channel: 'C0123ABCD', text: '<!channel> db-1 down' });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(slack.requests.length).toBe(before + 1);
    expect(postedText(slack.requests.at(-1)!)).toBe('<!channel> db-1 down');

    const description = async (s: CliSession) =>
      (await s.client.listTools()).tools.find((t) => t.name === 'send_notification')!.description;
    expect(await description(guarded)).toContain('post inert');
    expect(await description(broadcasting)).toContain('are allowed by the operator and notify everyone they name');
  });

  it('matches #names in any case of the entry, and an ID never as a name: nothing reaches Slack for a refused channel', async () => {
    const before = slack.requests.length;
    const ok = await send(guarded, { via: 'slack', channel: '#ops-alerts', text: 'hello' });
    expect(ok.isError, JSON.stringify(ok)).toBeFalsy();
    expect(slack.requests.length).toBe(before + 1);
    for (const channel of ['#c0123abcd', 'C0123ABCE']) {
      expect(errorOf(await send(guarded, { via: 'slack', channel, text: SECRET_BODY }))).toMatchObject({ code: 'RECIPIENT_NOT_ALLOWED' });
    }
    expect(slack.requests.length).toBe(before + 1);
  });

  it('refuses to start on an entry that is neither an ID nor a #name, naming it', async () => {
    for (const [entry, hint] of [
      ['deploys', 'DEPLOYS'],
      ['c0123abcd', 'upper case'],
    ]) {
      const { code, stdout, stderr } = await runCli([], env({ NOTIFY_SLACK_ALLOW: `C0123ABCD,${entry}` }));
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toContain(`NOTIFY_SLACK_ALLOW: "${entry}" is neither a channel ID nor a #name`);
      expect(stderr).toContain(hint);
    }
  });
});

describe('sms: segments as carriers split', () => {
  it('refuses a body whose € would straddle the segment boundary (3 segments, limit 2): nothing reaches Twilio', async () => {
    const before = twilio.requests.length;
    const error = errorOf(await send(guarded, { via: 'sms', to: '+14155550123', body: 'a'.repeat(152) + '€' + 'a'.repeat(152) }));
    expect(error).toMatchObject({ code: 'TOO_LONG' });
    expect(error.message).toContain('306 GSM-7 characters');
    expect(error.message).toContain('"€" (U+20AC) at position 152');
    expect(twilio.requests.length).toBe(before);

    const fits = await send(guarded, { via: 'sms', to: '+14155550123', body: 'a'.repeat(151) + '€' + 'a'.repeat(153) });
    expect(fits.structuredContent).toMatchObject({ status: 'sent', segments: 2, encoding: 'GSM-7' });
    expect(twilio.requests.length).toBe(before + 1);
  });
});
