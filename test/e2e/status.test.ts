/**
 * A notification's truthful status, end to end over the built CLI (`notify-mcp --http`),
 * with a 2025-11-25 client and a 2026-07-28 one: a live SMS to a fake Twilio (which records
 * the StatusCallback it was given), then Twilio's status callbacks signed with the twilio
 * package's own helper, and get_notification reading the result; a callback that arrives
 * before Twilio's API answer is held until the send is recorded. Forged callbacks change
 * nothing; another client cannot read the notification; an operator's token can.
 */
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import twilio from 'twilio';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { startFakeTwilio, type FakeTwilio } from '../helpers/fake-twilio.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { connectCli, ERAS, eraClient, errorOf, type Era, type ToolOutcome } from '../helpers/mcp-cli.js';

const SID = 'AC' + '2'.repeat(32);
const TWILIO_TOKEN = 'e2e-status-twilio-auth-token';
const PUBLIC_URL = 'https://notify.example.com';
const CALLBACK_URL = `${PUBLIC_URL}/webhooks/twilio`;
const TOKENS = { alice: 'alice-token-0123456789abcdef', bob: 'bob-token-0123456789abcdef00', ops: 'ops-token-0123456789abcdef000' };
type Who = keyof typeof TOKENS;

const dataDir = tempDataDir('notify-e2e-status-');
let fakeTwilio: FakeTwilio;
let server: HttpCli;
const clients: Client[] = [];

beforeAll(async () => {
  fakeTwilio = await startFakeTwilio();
  server = await startHttpCli(
    cliEnv({
      NOTIFY_DATA_DIR: dataDir,
      NOTIFY_HTTP_TOKENS: Object.entries(TOKENS)
        .map(([client, token]) => `${client}:${token}`)
        .join(','),
      NOTIFY_OPERATOR_CLIENTS: 'ops',
      NOTIFY_PUBLIC_URL: PUBLIC_URL,
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
      TWILIO_FROM: '+14155550111',
      TWILIO_API_URL: fakeTwilio.origin,
      NOTIFY_SMS_ALLOW: '+1415',
    }),
  );
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await server?.stop();
  await fakeTwilio?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A client of `who`'s token; its clientInfo name is its own unless `name` says otherwise. */
async function connect(era: Era, who: Who, name = `status-${who}`): Promise<Client> {
  const client = eraClient(name, era);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${TOKENS[who]}` } } }),
  );
  clients.push(client);
  expect(client.getProtocolEra()).toBe(era);
  return client;
}

type Sc = Record<string, any>;
const call = async (client: Client, name: string, args: Sc) => (await client.callTool({ name, arguments: args })) as ToolOutcome;
const getNotification = async (client: Client, id: string) => call(client, 'get_notification', { id });
const statusOf = async (client: Client, id: string) => (await getNotification(client, id)).structuredContent as Sc;

/**
 * Posts a status callback as Twilio does: form-encoded, to the StatusCallback it was given
 * (`url`, query included), signed over that URL with `authToken`, unless `signature` is given.
 */
async function callback(
  params: Record<string, string>,
  opts: { authToken?: string; signature?: string | null; url?: string; origin?: string } = {},
) {
  const url = opts.url ?? CALLBACK_URL;
  const signature =
    opts.signature === undefined ? twilio.getExpectedTwilioSignature(opts.authToken ?? TWILIO_TOKEN, url, params) : opts.signature;
  const { pathname, search } = new URL(url);
  return fetch(`${opts.origin ?? server.origin}${pathname}${search}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(signature === null ? {} : { 'x-twilio-signature': signature }) },
    body: new URLSearchParams(params).toString(),
  });
}

const receipt = (sid: string, status: string, extra: Record<string, string> = {}) => ({
  AccountSid: SID,
  MessageSid: sid,
  SmsSid: sid,
  MessageStatus: status,
  SmsStatus: status,
  To: '+14155550123',
  From: '+14155550111',
  ApiVersion: '2010-04-01',
  ...extra,
});

async function sendSms(client: Client, body: string): Promise<Sc> {
  const result = await call(client, 'send_notification', { via: 'sms', to: '+14155550123', body });
  expect(result.isError, JSON.stringify(result)).toBeFalsy();
  return result.structuredContent as Sc;
}

describe.each(ERAS)('status of a live SMS (%s clients)', (era) => {
  it('sent with a StatusCallback; a signed delivered callback makes it delivered; a late sent is ignored', async () => {
    const alice = await connect(era, 'alice');
    const sent = await sendSms(alice, `status e2e ${era}`);
    expect(sent).toMatchObject({ via: 'sms', status: 'sent', provider: 'twilio' });
    expect(sent.sent_means).toMatch(/Twilio accepted/);
    const sid = sent.provider_message_id as string;
    // Our id rides in the URL, under Twilio's signature.
    const statusCallback = `${CALLBACK_URL}?notification=${sent.id}`;
    expect(fakeTwilio.requests.at(-1)!.form).toMatchObject({ To: '+14155550123', StatusCallback: statusCallback });

    const before = await statusOf(alice, sent.id);
    expect(before).toMatchObject({
      id: sent.id,
      via: 'sms',
      status: 'sent',
      provider_message_id: sid,
      provider_status: { status: 'queued' },
    });
    expect(before.status_means).toBe(sent.sent_means);
    expect(before.attempts).toHaveLength(1);
    expect(before.attempts[0]).toMatchObject({ attempt: 1, outcome: 'sent' });
    expect(Date.parse(before.attempts[0].at)).toBeGreaterThanOrEqual(Date.parse(sent.accepted_at));

    const delivered = await callback(receipt(sid, 'delivered'), { url: statusCallback });
    expect(delivered.status).toBe(200);
    expect(await delivered.json()).toEqual({ ok: true, outcome: 'applied' });
    const after = await statusOf(alice, sent.id);
    expect(after).toMatchObject({ status: 'delivered', provider_status: { status: 'delivered' } });
    expect(after.provider_status.code).toBeUndefined();

    // Twilio's callbacks may arrive out of order: an earlier `sent` never moves it back.
    const late = await callback(receipt(sid, 'sent'));
    expect(late.status).toBe(200);
    expect(await late.json()).toEqual({ ok: true, outcome: 'ignored' });
    expect(await statusOf(alice, sent.id)).toMatchObject({ status: 'delivered', provider_status: { status: 'delivered' } });
  });

  it('a forged callback (unsigned, signed with another token, or altered after signing) is a 403 and changes nothing', async () => {
    const alice = await connect(era, 'alice');
    const sent = await sendSms(alice, `forged e2e ${era}`);
    const sid = sent.provider_message_id as string;
    const good = receipt(sid, 'delivered');
    const forged = [
      await callback(good, { signature: null }),
      await callback(good, { signature: '' }),
      await callback(good, { authToken: 'not-the-auth-token' }),
      // Signed for `delivered`, then the status changed: the signature covers every field.
      await callback(
        { ...good, MessageStatus: 'undelivered', SmsStatus: 'undelivered' },
        {
          signature: twilio.getExpectedTwilioSignature(TWILIO_TOKEN, CALLBACK_URL, good),
        },
      ),
      // Signed over the StatusCallback with its query, then posted with another query: the signature covers the query too.
      await callback(good, {
        url: `${CALLBACK_URL}?notification=${'ntf_' + '0'.repeat(32)}`,
        signature: twilio.getExpectedTwilioSignature(TWILIO_TOKEN, `${CALLBACK_URL}?notification=${sent.id}`, good),
      }),
      // Signed without a query, posted with one.
      await callback(good, {
        url: `${CALLBACK_URL}?notification=${sent.id}`,
        signature: twilio.getExpectedTwilioSignature(TWILIO_TOKEN, CALLBACK_URL, good),
      }),
    ];
    for (const res of forged) {
      expect(res.status).toBe(403);
      expect(((await res.json()) as Sc).error.code).toBe('FORBIDDEN');
    }
    expect(await statusOf(alice, sent.id)).toMatchObject({ status: 'sent', provider_status: { status: 'queued' } });

    // The real one still counts afterwards.
    expect((await callback(receipt(sid, 'undelivered', { ErrorCode: '30003' }))).status).toBe(200);
    expect(await statusOf(alice, sent.id)).toMatchObject({
      status: 'undelivered',
      provider_status: { status: 'undelivered', code: '30003' },
    });
  });

  it('another client cannot read the notification (the same answer as an unknown id); an operator can', async () => {
    const [alice, bob, ops] = await Promise.all([connect(era, 'alice'), connect(era, 'bob'), connect(era, 'ops')]);
    const sent = await sendSms(alice, `private e2e ${era}`);

    const theirs = errorOf(await getNotification(bob, sent.id));
    const unknownId = 'ntf_' + 'f'.repeat(32);
    const unknown = errorOf(await getNotification(bob, unknownId));
    expect(theirs.code).toBe('NOT_FOUND');
    expect(theirs.message.replace(sent.id, '<id>')).toBe(unknown.message.replace(unknownId, '<id>'));

    expect(await statusOf(ops, sent.id)).toMatchObject({ id: sent.id, status: 'sent', via: 'sms' });
    expect(await statusOf(alice, sent.id)).toMatchObject({ id: sent.id, status: 'sent' });
  });

  it("a non-operator token whose clientInfo name is an operator's gets no operator rights", async () => {
    const [alice, ops] = await Promise.all([connect(era, 'alice'), connect(era, 'ops')]);
    const fromAlice = await sendSms(alice, `impostor e2e ${era} (alice)`);
    const fromOps = await sendSms(ops, `impostor e2e ${era} (ops)`);
    const unknownId = 'ntf_' + 'e'.repeat(32);
    // Bob's token, named as the operator's token client and as the operator's own clientInfo.
    for (const name of ['ops', 'status-ops']) {
      const impostor = await connect(era, 'bob', name);
      const unknown = errorOf(await getNotification(impostor, unknownId));
      expect(unknown.code).toBe('NOT_FOUND');
      for (const sent of [fromAlice, fromOps]) {
        const theirs = errorOf(await getNotification(impostor, sent.id));
        expect(theirs.code, `bob named ${name} read ${sent.id}`).toBe('NOT_FOUND');
        expect(theirs.message.replace(sent.id, '<id>')).toBe(unknown.message.replace(unknownId, '<id>'));
      }
    }
    // The operator's own token still reads both.
    expect(await statusOf(ops, fromAlice.id)).toMatchObject({ id: fromAlice.id, status: 'sent' });
    expect(await statusOf(ops, fromOps.id)).toMatchObject({ id: fromOps.id, status: 'sent' });
  });
});

/** Polls until `read` gives a value (the fake has seen a request), for at most the test's timeout. */
async function eventually<T>(read: () => T | undefined): Promise<T> {
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a status callback that outruns its send (Twilio answers the create call 3 s late)', () => {
  it('is held, answered 200, and applied when the send is recorded: the notification ends delivered', async () => {
    const alice = await connect('modern', 'alice');
    const before = fakeTwilio.requests.length;
    fakeTwilio.answerDelayMs = 3000;
    try {
      const sending = sendSms(alice, 'outrun e2e');
      // Twilio has created the message (its SID exists) but has not answered the API call yet.
      const sid = await eventually(() => fakeTwilio.requests[before]?.sid);
      const early = await callback(receipt(sid, 'delivered'));
      expect(early.status).toBe(200);
      expect(await early.json()).toEqual({ ok: true, outcome: 'held' });
      const sent = await sending;
      expect(sent).toMatchObject({ status: 'sent', provider_message_id: sid });
      expect(await statusOf(alice, sent.id)).toMatchObject({ status: 'delivered', provider_status: { status: 'delivered' } });
    } finally {
      fakeTwilio.answerDelayMs = 0;
    }
  });
});

describe.each(ERAS)('a send whose Twilio answer is lost (DELIVERY_UNKNOWN, %s clients)', (era) => {
  it("answers with its notification id, and Twilio's signed receipts (one before the answer was given up, one after) settle it", async () => {
    const slowTwilio = await startFakeTwilio();
    slowTwilio.answerDelayMs = 6000;
    const dir = tempDataDir('notify-e2e-status-lost-');
    const lostServer = await startHttpCli(
      cliEnv({
        NOTIFY_DATA_DIR: dir,
        NOTIFY_HTTP_TOKENS: `alice:${TOKENS.alice}`,
        NOTIFY_PUBLIC_URL: PUBLIC_URL,
        NOTIFY_SEND_BUDGET_MS: '2500',
        TWILIO_ACCOUNT_SID: SID,
        TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
        TWILIO_FROM: '+14155550111',
        TWILIO_API_URL: slowTwilio.origin,
        NOTIFY_SMS_ALLOW: '+1415',
      }),
    );
    const alice = eraClient('status-alice', era);
    try {
      await alice.connect(
        new StreamableHTTPClientTransport(new URL(lostServer.url), {
          requestInit: { headers: { Authorization: `Bearer ${TOKENS.alice}` } },
        }),
      );
      const sending = call(alice, 'send_notification', { via: 'sms', to: '+14155550123', body: `lost answer ${era}` });
      const created = await eventually(() => (slowTwilio.requests[0]?.sid ? slowTwilio.requests[0] : undefined));
      const url = created.form.StatusCallback!;
      const early = await callback(receipt(created.sid!, 'sent'), { url, origin: lostServer.origin });
      expect(await early.json()).toEqual({ ok: true, outcome: 'held' });

      const lost = await sending;
      const error = errorOf(lost);
      expect(error.code).toBe('DELIVERY_UNKNOWN');
      const id = (error as Sc).notification_id as string;
      expect(id).toMatch(/^ntf_[0-9a-f]{32}$/);
      expect(url).toBe(`${CALLBACK_URL}?notification=${id}`);
      // The receipt held while the call hung settled the record as it was written.
      const held = (await call(alice, 'get_notification', { id })).structuredContent as Sc;
      expect(held).toMatchObject({ id, status: 'sent', provider_message_id: created.sid, provider_status: { status: 'sent' } });

      const delivered = await callback(receipt(created.sid!, 'delivered'), { url, origin: lostServer.origin });
      expect(await delivered.json()).toEqual({ ok: true, outcome: 'applied' });
      expect((await call(alice, 'get_notification', { id })).structuredContent).toMatchObject({ status: 'delivered' });
    } finally {
      await alice.close().catch(() => {});
      await lostServer.stop();
      await slowTwilio.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(ERAS)('over stdio without tokens, clientInfo names the caller (%s clients)', (era) => {
  it('a dry run reads as dry_run to its sender and as no such notification to another name', async () => {
    const dir = tempDataDir('notify-e2e-status-stdio-');
    const [mine, other] = await Promise.all(
      ['status-a', 'status-b'].map((name) => connectCli(cliEnv({ NOTIFY_DATA_DIR: dir }), name, era)),
    );
    try {
      const sent = (await call(mine!.client, 'send_notification', { via: 'sms', to: '+14155550123', body: 'dry' })).structuredContent as Sc;
      expect(sent).toMatchObject({ status: 'dry_run' });
      expect(sent.sent_means).toBeUndefined();
      expect(await statusOf(mine!.client, sent.id)).toMatchObject({
        status: 'dry_run',
        status_means: expect.stringMatching(/nothing was sent/),
        attempts: [],
      });
      expect(errorOf(await getNotification(other!.client, sent.id)).code).toBe('NOT_FOUND');
    } finally {
      await Promise.allSettled([mine?.close(), other?.close()]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the webhook route', () => {
  it('takes POST only, form-encoded, and knows only the providers that post receipts', async () => {
    expect((await fetch(`${server.origin}/webhooks/twilio`)).status).toBe(405);
    const json = await fetch(`${server.origin}/webhooks/twilio`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(json.status).toBe(415);
    expect((await fetch(`${server.origin}/webhooks/slack`, { method: 'POST' })).status).toBe(404);
    const huge = await fetch(`${server.origin}/webhooks/twilio`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'Body=' + 'x'.repeat(100_000),
    });
    expect(huge.status).toBe(413);
  });
});
