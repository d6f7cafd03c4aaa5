/**
 * In-channel answers over the built CLI (`notify-mcp --http`), in both protocol eras (DESIGN
 * section 11): a Slack question posted with buttons on a fake Slack, a signed click on POST
 * /slack/interactions, and get_notification shows the answer; an SMS question whose text on
 * the fake Twilio ends with the reply codes, a signed reply on POST /webhooks/twilio/inbound,
 * and a waiting get_notification returns with the answer.
 */
import { rmSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/client';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slackSignature } from '../../src/channels/slack/signature.js';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { startFakePeer, type FakePeer } from '../helpers/fakes.js';
import { startFakeTwilio, type FakeTwilio } from '../helpers/fake-twilio.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { connectHttp, type ToolOutcome, type Era, ERAS } from '../helpers/mcp-cli.js';

const PUBLIC_URL = 'https://notify.example.com';
const TWILIO_TOKEN = 'e2e-replies-twilio-auth-token';
const SIGNING_SECRET = 'e2e-replies-slack-signing-secret';
const TOKEN = 'replies-token-0123456789abcdef';

const dataDir = tempDataDir('notify-e2e-replies-');
let fakeTwilio: FakeTwilio;
let fakeSlack: FakePeer;
let server: HttpCli;
const clients: Client[] = [];

beforeAll(async () => {
  [fakeTwilio, fakeSlack] = await Promise.all([
    startFakeTwilio(),
    startFakePeer({ status: 200, json: { ok: true, channel: 'C0123ABCD', ts: '1712345678.000700' } }),
  ]);
  server = await startHttpCli(
    cliEnv({
      NOTIFY_DATA_DIR: dataDir,
      NOTIFY_HTTP_TOKENS: `bot:${TOKEN}`,
      NOTIFY_PUBLIC_URL: PUBLIC_URL,
      TWILIO_ACCOUNT_SID: 'AC' + '7'.repeat(32),
      TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
      TWILIO_FROM: '+14155550111',
      TWILIO_API_URL: fakeTwilio.origin,
      NOTIFY_SMS_ALLOW: '+1415',
      SLACK_BOT_TOKEN: 'xoxb-e2e',
      SLACK_API_URL: fakeSlack.origin,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      NOTIFY_SLACK_ALLOW: '*',
    }),
  );
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await server?.stop();
  await Promise.allSettled([fakeTwilio?.close(), fakeSlack?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

async function connect(era: Era): Promise<Client> {
  const client = await connectHttp(server.url, `replies-${era}`, era, TOKEN);
  clients.push(client);
  expect(client.getProtocolEra()).toBe(era);
  return client;
}

type Sc = Record<string, any>;
async function call(client: Client, name: string, args: Sc): Promise<Sc> {
  const result = (await client.callTool({ name, arguments: args })) as ToolOutcome;
  expect(result.isError, JSON.stringify(result)).toBeFalsy();
  return result.structuredContent as Sc;
}

describe.each(ERAS)('answers in the channel, %s client', (era) => {
  it('Slack: buttons on the post, a signed click, get_notification shows the answer, the message says who', async () => {
    const client = await connect(era);
    const sent = await call(client, 'send_notification', {
      via: 'slack',
      channel: 'C0123ABCD',
      text: `Ship v2 (${era})?`,
      ask: { choices: ['Ship it', 'Hold'] },
    });
    const post = fakeSlack.requests.findLast((r) => r.path === '/chat.postMessage')!;
    const actions = (JSON.parse(post.form.blocks!) as { type: string; elements?: { value: string }[] }[]).find(
      (b) => b.type === 'actions',
    )!;
    expect(actions.elements).toHaveLength(2);
    const value = actions.elements![1]!.value;

    const payload = {
      type: 'block_actions',
      user: { id: 'U0E2EUSER' },
      actions: [{ action_id: 'notify_answer_1', block_id: 'notify_answer', value }],
      response_url: `${fakeSlack.origin}/actions/T0/1/${era}`,
      message: { text: post.form.text, blocks: JSON.parse(post.form.blocks!) },
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const ts = String(Math.floor(Date.now() / 1000));
    const click = await fetch(`${server.origin}/slack/interactions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': ts,
        'x-slack-signature': slackSignature(SIGNING_SECRET, ts, body),
      },
      body,
    });
    expect(click.status).toBe(200);

    const shown = await call(client, 'get_notification', { id: sent.id });
    expect(shown.answer).toMatchObject({ choice: 'Hold', by: 'U0E2EUSER', via: 'slack' });
    const update = fakeSlack.requests.find((r) => r.path === `/actions/T0/1/${era}`)!;
    expect(JSON.parse(update.body)).toMatchObject({ replace_original: true });
    expect(update.body).toContain('Answered *Hold* by <@U0E2EUSER>');
  });

  it('SMS: the text ends with the reply codes, a signed reply, a waiting get_notification returns the answer', async () => {
    const client = await connect(era);
    const to = era === 'legacy' ? '+14155550131' : '+14155550132';
    const sent = await call(client, 'send_notification', {
      via: 'sms',
      to,
      body: `Disk 91% (${era}). Purge logs?`,
      ask: { choices: ['Yes', 'No'] },
    });
    expect(fakeTwilio.requests.at(-1)!.form.Body).toBe(`Disk 91% (${era}). Purge logs?\n\nReply 1 for Yes, 2 for No`);

    const waiting = call(client, 'get_notification', { id: sent.id, wait_s: 20 });
    const params = { AccountSid: 'AC' + '7'.repeat(32), MessageSid: 'SM' + '8'.repeat(32), From: to, To: '+14155550111', Body: '1' };
    const reply = await fetch(`${server.origin}/webhooks/twilio/inbound`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilio.getExpectedTwilioSignature(TWILIO_TOKEN, `${PUBLIC_URL}/webhooks/twilio/inbound`, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    expect(reply.status).toBe(200);
    expect(await reply.text()).toContain('<Response></Response>');
    expect((await waiting).answer).toMatchObject({ choice: 'Yes', by: to, via: 'sms' });
  });
});
