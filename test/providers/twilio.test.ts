/**
 * Twilio adapter contract: the official twilio client against Prism serving Twilio's
 * published API description, plus a small fake for error codes, Retry-After and hangs. Its burst
 * contract (nothing reaches Twilio after its call answered) is ./burst-contract.test.ts, shared with Slack.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotifyError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { DeliveryUnknownError, ProviderRejectedError, ProviderTransientError, RecipientOptedOutError } from '../../src/providers/errors.js';
import { sendFailureInfo, sendWithRetry } from '../../src/providers/retry.js';
import { createTwilioProvider, type SmsPayload } from '../../src/channels/sms/twilio.js';
import type { Provider } from '../../src/providers/types.js';
import { startFakePeer, type FakePeer } from '../helpers/fakes.js';
import { freePort, PRISM_REQUEST_TIMEOUT_MS, prismUnavailableReason, startPrism, type PrismPeer } from '../helpers/prism.js';
import { caught } from '../helpers/caught.js';

const SID = 'AC' + 'a'.repeat(32);
const TOKEN = 'test-auth-token';
const ctx = (id = 'ntf_sms') => ({ notificationId: id, signal: new AbortController().signal });
const sms = (over: Partial<SmsPayload> = {}): SmsPayload => ({ To: '+14155550100', Body: 'Disk full', From: '+14155550111', ...over });

const skipReason = prismUnavailableReason();
const describePrism = skipReason ? describe.skip : describe;

describePrism(`Twilio provider against Prism (Twilio's API spec)${skipReason ? ` [skipped: ${skipReason}]` : ''}`, () => {
  let prism: PrismPeer;
  let provider: Provider<SmsPayload>;

  beforeAll(async () => {
    prism = await startPrism('twilio');
    provider = await createTwilioProvider({
      accountSid: SID,
      authToken: TOKEN,
      apiUrl: prism.origin,
      timeoutMs: PRISM_REQUEST_TIMEOUT_MS,
      log: silentLogger,
    });
  });
  afterAll(async () => {
    await prism?.stop();
  });

  it('creates a message from a number and returns its SID', async () => {
    const receipt = await provider.send(sms(), ctx());
    expect(receipt.providerMessageId).toMatch(/^SM[0-9a-f]{32}$/i);
  });

  it('asks for status callbacks: the spec takes StatusCallback, and the answer carries the status', async () => {
    const receipt = await provider.send(sms({ StatusCallback: 'https://notify.example.com/webhooks/twilio' }), ctx());
    expect(receipt.providerMessageId).toMatch(/^SM/);
    expect(receipt.providerStatus).toEqual(expect.any(String));
  });

  it('sends MMS media as MediaUrl: the spec takes the field, repeated', async () => {
    const receipt = await provider.send(sms({ MediaUrl: ['https://cdn.example.com/a.png', 'https://cdn.example.com/b.jpg'] }), ctx());
    expect(receipt.providerMessageId).toMatch(/^SM/);
  });

  it('creates a message through a messaging service', async () => {
    const receipt = await provider.send(sms({ From: undefined, MessagingServiceSid: 'MG' + '0'.repeat(32) }), ctx());
    expect(receipt.providerMessageId).toMatch(/^SM/);
  });

  it('maps a request the spec refuses (422: MessagingServiceSid pattern) to ProviderRejectedError', async () => {
    const err = await caught(provider.send(sms({ From: undefined, MessagingServiceSid: 'MG-not-a-sid' }), ctx()));
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect((err as ProviderRejectedError).vendorCode).toBe(422);
  });

  it('maps a missing required field (To) to ProviderRejectedError', async () => {
    const err = await caught(provider.send(sms({ To: undefined as unknown as string }), ctx()));
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect((err as Error).message).toMatch(/to/i);
  });

  it('maps refused credentials (401) to ProviderRejectedError naming the variables', async () => {
    // Prism checks the Basic credentials' shape: a token with a colon does not parse.
    const bad = await createTwilioProvider({
      accountSid: SID,
      authToken: 'bad:token',
      apiUrl: prism.origin,
      timeoutMs: PRISM_REQUEST_TIMEOUT_MS,
      log: silentLogger,
    });
    const err = await caught(bad.send(sms(), ctx()));
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect((err as ProviderRejectedError).vendorCode).toBe(401);
    expect((err as Error).message).toContain('TWILIO_AUTH_TOKEN');
  });
});

describe('Twilio provider against a fake for what Prism cannot answer', () => {
  let fake: FakePeer;
  let provider: Provider<SmsPayload>;
  const created = { status: 201, json: { sid: 'SM' + 'b'.repeat(32), status: 'queued' } };
  const twilioError = (status: number, code: number, message: string, headers?: Record<string, string>) => ({
    status,
    headers,
    json: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
  });

  beforeAll(async () => {
    fake = await startFakePeer();
    provider = await createTwilioProvider({ accountSid: SID, authToken: TOKEN, apiUrl: fake.origin, timeoutMs: 5_000, log: silentLogger });
  });
  afterAll(async () => {
    await fake?.close();
  });

  it("keeps the client's own path, Basic auth and form fields, rewriting only the origin", async () => {
    fake.replies.push(created);
    const receipt = await provider.send(sms(), ctx());
    expect(receipt.providerMessageId).toBe('SM' + 'b'.repeat(32));
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(`/2010-04-01/Accounts/${SID}/Messages.json`);
    expect(req.headers.authorization).toBe('Basic ' + Buffer.from(`${SID}:${TOKEN}`).toString('base64'));
    expect(req.form).toEqual({ To: '+14155550100', Body: 'Disk full', From: '+14155550111' });
  });

  it('writes each MMS media URL as its own MediaUrl form field', async () => {
    fake.replies.push(created);
    await provider.send(sms({ MediaUrl: ['https://cdn.example.com/a.png', 'https://cdn.example.com/b.jpg'] }), ctx());
    const body = new URLSearchParams(fake.requests.at(-1)!.body);
    expect(body.getAll('MediaUrl')).toEqual(['https://cdn.example.com/a.png', 'https://cdn.example.com/b.jpg']);
  });

  it('maps 21610 (recipient replied STOP) to RecipientOptedOutError and RECIPIENT_OPTED_OUT', async () => {
    fake.replies.push(twilioError(400, 21610, 'Attempt to send to unsubscribed recipient'));
    const err = await caught(provider.send(sms(), ctx()));
    expect(err).toBeInstanceOf(RecipientOptedOutError);
    expect((err as RecipientOptedOutError).vendorCode).toBe(21610);

    fake.replies.push(twilioError(400, 21610, 'Attempt to send to unsubscribed recipient'));
    const viaRetry = await caught(sendWithRetry(provider, sms(), { notificationId: 'ntf_stop', budgetMs: 5_000, log: silentLogger }));
    expect((viaRetry as NotifyError).code).toBe('RECIPIENT_OPTED_OUT');
  });

  it.each([
    [21211, "The 'To' number +1415 is not a valid phone number.", 'E.164'],
    [21614, "'To' number is not a valid mobile number", 'mobile'],
    [21606, 'The From phone number is not a valid, SMS-capable inbound phone number', '21606'],
  ])('maps error %i to ProviderRejectedError keeping the code', async (code, message, hint) => {
    fake.replies.push(twilioError(400, code, message));
    const err = await caught(provider.send(sms(), ctx()));
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect((err as ProviderRejectedError).vendorCode).toBe(code);
    expect((err as Error).message).toContain(hint);
  });

  it('retries a 429 after its Retry-After, then succeeds', async () => {
    fake.replies.push(twilioError(429, 20429, 'Too Many Requests', { 'retry-after': '3' }), created);
    const before = fake.requests.length;
    const sleeps: number[] = [];
    const out = await sendWithRetry(provider, sms(), {
      notificationId: 'ntf_429',
      budgetMs: 10_000,
      log: silentLogger,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    expect(out.attempts).toBe(2);
    expect(sleeps).toEqual([3000]);
    expect(out.history[0]).toMatchObject({ outcome: 'rate_limited', vendorCode: 20429 });
    expect(fake.requests.length - before).toBe(2);
  });

  it('maps 503 to ProviderTransientError with its Retry-After', async () => {
    fake.replies.push(twilioError(503, 20503, 'Service Unavailable', { 'retry-after': '7' }));
    const err = await caught(provider.send(sms(), ctx()));
    expect(err).toBeInstanceOf(ProviderTransientError);
    expect((err as ProviderTransientError).opts.retryAfterMs).toBe(7000);
    expect((err as ProviderTransientError).opts.rateLimited).toBe(false);
  });

  it('answers PROVIDER_UNAVAILABLE with retry_after_s when 5xx outlasts the budget', async () => {
    fake.replies.push(twilioError(503, 20503, 'Service Unavailable', { 'retry-after': '30' }));
    const err = await caught(sendWithRetry(provider, sms(), { notificationId: 'ntf_503', budgetMs: 2_000, log: silentLogger }));
    expect((err as NotifyError).code).toBe('PROVIDER_UNAVAILABLE');
    expect((err as NotifyError).details.retryAfterS).toBe(30);
    expect(sendFailureInfo(err)?.attempts).toBe(1);
  });

  it('maps a hang past the request timeout to DeliveryUnknownError', async () => {
    const quick = await createTwilioProvider({ accountSid: SID, authToken: TOKEN, apiUrl: fake.origin, timeoutMs: 300, log: silentLogger });
    fake.replies.push('hang');
    const err = await caught(quick.send(sms(), ctx()));
    expect(err).toBeInstanceOf(DeliveryUnknownError);
  });

  it('maps a hang past the send budget to DELIVERY_UNKNOWN without a second request', async () => {
    fake.replies.push('hang', created);
    const before = fake.requests.length;
    const err = await caught(sendWithRetry(provider, sms(), { notificationId: 'ntf_hang', budgetMs: 500, log: silentLogger }));
    expect((err as NotifyError).code).toBe('DELIVERY_UNKNOWN');
    expect(fake.requests.length - before).toBe(1);
    fake.replies.length = 0;
  });

  it('maps a refused connection to ProviderTransientError', async () => {
    const port = await freePort();
    const nowhere = await createTwilioProvider({
      accountSid: SID,
      authToken: TOKEN,
      apiUrl: `http://127.0.0.1:${port}`,
      timeoutMs: 1_000,
      log: silentLogger,
    });
    const err = await caught(nowhere.send(sms(), ctx()));
    expect(err).toBeInstanceOf(ProviderTransientError);
    expect((err as ProviderTransientError).vendorCode).toBe('ECONNREFUSED');
  });
});
