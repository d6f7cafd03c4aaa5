/**
 * Answers in the channel itself (DESIGN section 11), over HTTP in process: Slack button clicks
 * on POST /slack/interactions, SMS replies on POST /webhooks/twilio/inbound. Each refusal
 * changes nothing: a forged or stale Slack signature, a replayed click, a reply from a
 * number that was not asked, a code not offered; STOP is an opt-out, never an answer. On
 * SQLite and PostgreSQL.
 */
import twilio from 'twilio';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { slackSignature } from '../../src/channels/slack/signature.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/core/log.js';
import { sendOrAsk } from '../../src/notification/pipeline.js';
import type { SendResult } from '../../src/notification/send-deps.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { tempDataDir } from '../helpers/cli.js';
import { startFakePeer, type FakePeer } from '../helpers/fakes.js';
import { raw } from '../helpers/http.js';
import { FakeProvider, FakeSlack } from '../helpers/pipeline-kit.js';
import { postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';

const PUBLIC_URL = 'https://notify.example.com';
const SIGNING_SECRET = 'slack-signing-secret-for-tests';
const TWILIO_TOKEN = 'replies-auth-token';
const INBOUND_URL = `${PUBLIC_URL}/webhooks/twilio/inbound`;
const ASKED = '+14155550123';

let clock = Date.parse('2026-12-06T12:00:00Z');
let app: App;
let http: HttpHandle;
let hooks: FakePeer;
const logs: string[] = [];
const sms = new FakeProvider('twilio');
const slack = new FakeSlack();

/** SQLite, and PostgreSQL when it answers (DATABASE_URL makes it required). */
const STORES: { name: string; env(): Promise<{ env: Record<string, string>; close(): Promise<void> }> }[] = [
  { name: 'SQLite', env: async () => ({ env: { NOTIFY_DATA_DIR: tempDataDir('notify-replies-') }, close: async () => {} }) },
  {
    name: 'PostgreSQL',
    env: async () => {
      const schema = await sharedPostgresSchema('replies');
      return { env: { ...schema.env, NOTIFY_DATA_DIR: tempDataDir('notify-replies-pg-') }, close: () => schema.close() };
    },
  },
];
const pgSkip = await postgresSkipReason('replies');

async function serve(storeEnv: Record<string, string>): Promise<void> {
  const log = createLogger('debug', (line) => void logs.push(line));
  const config = loadConfig({
    ...storeEnv,
    NOTIFY_PUBLIC_URL: PUBLIC_URL,
    TWILIO_ACCOUNT_SID: 'AC' + '5'.repeat(32),
    TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
    TWILIO_FROM: '+14155550111',
    NOTIFY_SMS_ALLOW: '+1415',
    SLACK_BOT_TOKEN: 'xoxb-1',
    NOTIFY_SLACK_ALLOW: '*',
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    // response_url may point at the loopback SLACK_API_URL of a test, or hooks.slack.com.
    SLACK_API_URL: hooks.origin,
  });
  app = await createApp(config, log, { providers: { sms, slack }, now: () => clock, noOutboxRunner: true });
  http = await serveHttp(app, { port: 0 }, log);
}

beforeAll(async () => {
  hooks = await startFakePeer({ status: 200, json: {} });
});
afterAll(async () => {
  await hooks?.close();
});
beforeEach(() => {
  logs.length = 0;
  hooks.requests.length = 0;
});

const send = async (value: Record<string, unknown>) => (await sendOrAsk(app, value.via as string, value, { client: 'bot' })) as SendResult;
const answerOf = async (id: string) => (await app.store.getQuestion(id))?.answer ?? null;

/** A click on button `index` of the message whose buttons carry `token`, signed at `atMs` (or forged). */
function click(token: string, index: number, user: string, opts: { atMs?: number; secret?: string } = {}) {
  const payload = {
    type: 'block_actions',
    user: { id: user },
    actions: [{ action_id: `notify_answer_${index}`, block_id: 'notify_answer', value: `${index}:${token}` }],
    response_url: `${hooks.origin}/actions/T1/1/xyz`,
    message: {
      text: 'Deploy v2?',
      blocks: [
        { type: 'section', block_id: 's' },
        { type: 'actions', block_id: 'notify_answer' },
      ],
    },
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const ts = String(Math.floor((opts.atMs ?? clock) / 1000));
  return raw(`${http.url}/slack/interactions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': ts,
      'x-slack-signature': slackSignature(opts.secret ?? SIGNING_SECRET, ts, body),
    },
    body,
  });
}

/** An incoming SMS as Twilio posts it, signed with the account's auth token (or another). */
function reply(from: string, text: string, token = TWILIO_TOKEN) {
  const params = { AccountSid: 'AC' + '5'.repeat(32), MessageSid: 'SM' + '6'.repeat(32), From: from, To: '+14155550111', Body: text };
  return raw(`${http.url}/webhooks/twilio/inbound`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(token, INBOUND_URL, params),
    },
    body: new URLSearchParams(params).toString(),
  });
}

/** The token the buttons of the last Slack post carry. */
function lastButtons(): { token: string; blocks: { type: string; elements?: { value: string; text: { text: string } }[] }[] } {
  const payload = slack.payloads.at(-1) as { blocks: { type: string; elements?: { value: string; text: { text: string } }[] }[] };
  const actions = payload.blocks.find((b) => b.type === 'actions')!;
  return { token: actions.elements![0]!.value.split(':')[1]!, blocks: payload.blocks };
}

describe.each(STORES)('in-channel answers ($name)', ({ name, env }) => {
  const skip = name === 'PostgreSQL' && pgSkip !== null;
  let closeEnv: () => Promise<void> = async () => {};
  beforeAll(async () => {
    if (skip) return;
    const made = await env();
    closeEnv = made.close;
    await serve(made.env);
  });
  afterAll(async () => {
    if (skip) return;
    await http?.close();
    await app?.close();
    await closeEnv();
  });

  describe('Slack buttons', () => {
    it.skipIf(skip)('a question posts one button per choice, the text keeping its link', async () => {
      await send({ via: 'slack', channel: 'C0123ABCD', text: 'Deploy v2?', ask: { choices: ['Yes', 'No'] } });
      const posted = slack.payloads.at(-1) as { text: string; blocks: { type: string; elements?: unknown[] }[] };
      expect(posted.text).toMatch(/^Deploy v2\?\n\nAnswer \(Yes \/ No\): <https:\/\/notify\.example\.com\/answer\/[\w-]{43}>$/);
      expect(posted.blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: 'Deploy v2?' } });
      expect(
        lastButtons()
          .blocks.at(-1)!
          .elements!.map((e) => (e as { text: { text: string } }).text.text),
      ).toEqual(['Yes', 'No']);
    });

    it.skipIf(skip)('a forged signature is 403 and records nothing', async () => {
      const { id } = await send({ via: 'slack', channel: 'C0123ABCD', text: 'Forged?', ask: {} });
      const answer = await click(lastButtons().token, 0, 'U0FORGER', { secret: 'not-the-secret' });
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body).error.code).toBe('FORBIDDEN');
      expect(await answerOf(id)).toBeNull();
      expect(hooks.requests).toEqual([]);
    });

    it.skipIf(skip)('a correctly signed click older than 5 minutes (a replay) is 403 and records nothing', async () => {
      const { id } = await send({ via: 'slack', channel: 'C0123ABCD', text: 'Replay?', ask: {} });
      const stale = await click(lastButtons().token, 0, 'U0REPLAY', { atMs: clock - 5 * 60_000 - 1000 });
      expect(stale.status).toBe(403);
      expect(await answerOf(id)).toBeNull();
      // Within the window, the same click counts.
      expect((await click(lastButtons().token, 0, 'U0REPLAY', { atMs: clock - 4 * 60_000 })).status).toBe(200);
      expect(await answerOf(id)).toMatchObject({ choice: 'Acknowledge', by: 'U0REPLAY', via: 'slack' });
    });

    it.skipIf(skip)('a click is recorded once; a second click is told who answered, and the audit has one entry', async () => {
      const { id } = await send({ via: 'slack', channel: 'C0123ABCD', text: 'Deploy v2?', ask: { choices: ['Yes', 'No'] } });
      const { token } = lastButtons();
      const before = (await app.store.auditHead()).seq;
      expect((await click(token, 1, 'U0FIRST')).status).toBe(200);
      expect(await answerOf(id)).toEqual({ choice: 'No', by: 'U0FIRST', via: 'slack', at: clock });
      const first = JSON.parse(hooks.requests[0]!.body);
      expect(first).toMatchObject({ replace_original: true, text: 'Deploy v2?' });
      expect(first.blocks[1]).toEqual({ type: 'context', elements: [{ type: 'mrkdwn', text: 'Answered *No* by <@U0FIRST>' }] });

      expect((await click(token, 0, 'U0SECOND')).status).toBe(200);
      expect(await answerOf(id)).toEqual({ choice: 'No', by: 'U0FIRST', via: 'slack', at: clock });
      expect(JSON.parse(hooks.requests[1]!.body).blocks[1].elements[0].text).toBe('Answered *No* by <@U0FIRST>');
      const entries = await app.store.auditEntries({ afterSeq: before, limit: 10 });
      expect(entries.filter((e) => e.kind === 'question.answered').map((e) => e.notification_id)).toEqual([id]);
    });

    it.skipIf(skip)('a button position the stored question does not offer records nothing, and the clicker is told', async () => {
      const { id } = await send({ via: 'slack', channel: 'C0123ABCD', text: 'Two choices', ask: { choices: ['Yes', 'No'] } });
      expect((await click(lastButtons().token, 4, 'U0EDGE')).status).toBe(200);
      expect(await answerOf(id)).toBeNull();
      expect(JSON.parse(hooks.requests[0]!.body)).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    });
  });

  describe('SMS replies', () => {
    it.skipIf(skip)('the text ends with the reply codes, and no link', async () => {
      await send({ via: 'sms', to: ASKED, body: 'Deploy v2?', ask: { choices: ['Yes', 'No'] } });
      expect((sms.payloads.at(-1) as { Body: string }).Body).toBe('Deploy v2?\n\nReply 1 for Yes, 2 for No');
      await send({ via: 'sms', to: ASKED, body: 'Disk full', ask: {} });
      expect((sms.payloads.at(-1) as { Body: string }).Body).toBe('Disk full\n\nReply 1 to acknowledge');
    });

    it.skipIf(skip)('a digit answers the newest open question sent to that number, answered with empty TwiML', async () => {
      const older = await send({ via: 'sms', to: '+14155550124', body: 'Older?', ask: { choices: ['Yes', 'No'] } });
      clock += 1000;
      const newer = await send({ via: 'sms', to: '+14155550124', body: 'Newer?', ask: { choices: ['Yes', 'No'] } });
      const answer = await reply('+14155550124', ' 2. ');
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('text/xml');
      expect(answer.body).toBe('<?xml version="1.0" encoding="UTF-8"?><Response></Response>');
      expect(await answerOf(newer.id)).toEqual({ choice: 'No', by: '+14155550124', via: 'sms', at: clock });
      expect(await answerOf(older.id)).toBeNull();
    });

    it.skipIf(skip)('a reply from a number that was not asked changes nothing, 200 with empty TwiML, and says why in the log', async () => {
      const { id } = await send({ via: 'sms', to: '+14155550125', body: 'Only you', ask: {} });
      const answer = await reply('+14155550999', '1');
      expect(answer.status).toBe(200);
      expect(answer.body).toContain('<Response></Response>');
      expect(await answerOf(id)).toBeNull();
      expect(logs.some((l) => l.includes('no open question was sent to this number'))).toBe(true);
      expect(logs.some((l) => l.includes('+14155550999'))).toBe(false);
    });

    it.skipIf(skip)('a code not offered changes nothing', async () => {
      const { id } = await send({ via: 'sms', to: '+14155550126', body: 'Yes or no?', ask: { choices: ['Yes', 'No'] } });
      expect((await reply('+14155550126', '3')).status).toBe(200);
      expect(await answerOf(id)).toBeNull();
      expect(logs.some((l) => l.includes('code 3 is not offered'))).toBe(true);
      expect((await reply('+14155550126', 'yes please')).status).toBe(200);
      expect(await answerOf(id)).toBeNull();
    });

    it.skipIf(skip)('STOP wins: an opt-out, never an answer, and the next send to that number is refused', async () => {
      const { id } = await send({ via: 'sms', to: '+14155550127', body: 'Ack?', ask: {} });
      expect((await reply('+14155550127', ' stop ')).status).toBe(200);
      expect(await answerOf(id)).toBeNull();
      expect(await app.store.findOptedOut({ via: 'sms', recipients: ['+14155550127'] })).toBe('+14155550127');
      await expect(send({ via: 'sms', to: '+14155550127', body: 'Again' })).rejects.toMatchObject({ code: 'RECIPIENT_OPTED_OUT' });
    });

    it.skipIf(skip)('an unsigned or mis-signed reply is 403 and changes nothing', async () => {
      const { id } = await send({ via: 'sms', to: '+14155550128', body: 'Signed?', ask: {} });
      expect((await reply('+14155550128', '1', 'another-token')).status).toBe(403);
      expect(await answerOf(id)).toBeNull();
    });

    it.skipIf(skip)('an expired question takes no reply', async () => {
      const { id } = await send({ via: 'sms', to: '+14155550129', body: 'Quick?', ask: { expires_in_s: 60 } });
      clock += 61_000;
      expect((await reply('+14155550129', '1')).status).toBe(200);
      expect(await answerOf(id)).toBeNull();
      expect(logs.some((l) => l.includes('those unanswered have expired'))).toBe(true);
    });
  });
});
