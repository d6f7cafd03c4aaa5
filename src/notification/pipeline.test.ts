/**
 * The send pipeline's own logic, with a counting fake provider injected through the deps
 * and a real SQLite store: what is checked before a provider call, what is recorded after.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeProvider, failure, openTempStore, pipelineDeps, SMS_ENV } from '../../test/helpers/pipeline-kit.js';
import { sms as smsChannel } from '../channels/sms/index.js';
import { DeliveryUnknownError, ProviderRejectedError, RecipientOptedOutError } from '../providers/errors.js';
import type { SqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/types.js';
import { sendNotification as sendVia, type PipelineDeps, type SendOptions } from './pipeline.js';
import { applyReceipt } from './status-receipt.js';

let store: SqliteStore;
let sms: FakeProvider;

/** A call as the union validated it. */
type Call = { via: string } & Record<string, unknown>;

const sendNotification = (d: PipelineDeps, call: Call, opts: SendOptions) => sendVia(d, call.via, call, opts);

const deps = (env: Record<string, string> = {}): Promise<PipelineDeps> =>
  pipelineDeps({ store, providers: { sms }, env: { ...SMS_ENV, ...env }, rateGate: true });

const text = (to = '+14155550123', extra: Record<string, unknown> = {}): Call => ({ via: 'sms', to, body: 'Disk full', ...extra });

beforeEach(async () => {
  store = await openTempStore('pipeline');
  sms = new FakeProvider();
});
afterEach(async () => store.close());

describe('sendNotification', () => {
  it('sends a live SMS once and records it with segments and the provider id', async () => {
    const result = await sendNotification(await deps(), text(), { client: 'bot' });
    expect(result).toMatchObject({
      via: 'sms',
      status: 'sent',
      provider: 'fake',
      provider_message_id: 'fake-1',
      segments: 1,
      encoding: 'GSM-7',
    });
    expect(sms.payloads).toEqual([{ To: '+14155550123', Body: 'Disk full', From: '+14155550000' }]);
    const [record] = await store.listDeliveries(1);
    expect(record).toMatchObject({ id: result.id, status: 'sent', attempts: 1, client: 'bot', provider_message_id: 'fake-1' });
  });

  it('applies a receipt held for its provider id (the callback came before the answer) as it records the send', async () => {
    const d = await deps();
    expect(await applyReceipt(d, 'sms', { providerMessageId: 'fake-1', event: 'delivered', providerStatus: 'delivered', code: null })).toBe(
      'held',
    );
    const result = await sendNotification(d, text(), { client: 'bot' });
    expect(await store.getDelivery(result.id)).toMatchObject({
      status: 'delivered',
      provider_status: 'delivered',
      provider_message_id: 'fake-1',
    });
    expect(
      await store.settleHeldReceipts((await store.getDelivery(result.id))!, (_d, rows) => ({ change: null, result: rows })),
    ).toBeUndefined();
  });

  it('answers sent when the held receipts cannot be read after the record: the provider has the message', async () => {
    const broken: Store = Object.assign(Object.create(store) as Store, {
      settleHeldReceipts: async () => Promise.reject(new Error('disk I/O error')),
    });
    const result = await sendNotification({ ...(await deps()), store: broken }, text(), { client: 'bot' });
    expect(result).toMatchObject({ status: 'sent', provider_message_id: 'fake-1' });
    expect(await store.getDelivery(result.id)).toMatchObject({ status: 'sent' });
  });

  it('refuses a recipient off the allowlist without calling the provider or recording anything', async () => {
    const err = await failure(sendNotification(await deps(), text('+447911123456'), { client: null }));
    expect(err.code).toBe('RECIPIENT_NOT_ALLOWED');
    expect(err.message).toContain('NOTIFY_SMS_ALLOW');
    expect(sms.payloads).toEqual([]);
    expect(await store.listDeliveries(10)).toEqual([]);
  });

  it('names every refused recipient, and points at the first where the call names it', async () => {
    const d = await deps({ NOTIFY_EMAIL_ALLOW: 'example.com' });
    const call: Call = {
      via: 'email',
      to: 'ops@example.com',
      cc: ['lead@example.com', 'Eve <eve@evil.example>'],
      bcc: ['mallory@evil.example'],
      subject: 's',
      body_html: '<p>x</p>',
    };
    const err = await failure(sendNotification(d, call, { client: null }));
    expect(err.toBody()).toMatchObject({ code: 'RECIPIENT_NOT_ALLOWED', via: 'email', path: '/cc/1' });
    expect(err.message).toContain('eve@evil.example, mallory@evil.example are not on');
    expect(await store.listDeliveries(10)).toEqual([]);
  });

  it('remembers an opt-out and refuses later sends to that number without a call', async () => {
    sms.failWith = new RecipientOptedOutError('twilio', 'The recipient replied STOP.', 21610);
    expect((await failure(sendNotification(await deps(), text(), { client: null }))).code).toBe('RECIPIENT_OPTED_OUT');
    expect(sms.payloads).toHaveLength(1);
    expect((await failure(sendNotification(await deps(), text(), { client: null }))).code).toBe('RECIPIENT_OPTED_OUT');
    expect(sms.payloads).toHaveLength(1);
    expect(await sendNotification(await deps(), text('+14155550999'), { client: null }).catch((e) => e.code)).toBe('RECIPIENT_OPTED_OUT');
    expect(sms.payloads).toHaveLength(2); // another number was tried: the opt-out is per number
    // A keyed send looks the opt-out up with its claim: refused, and its key left free.
    const keyed = text(undefined, { idempotency_key: 'after-stop' });
    const refused = await failure(sendNotification(await deps(), keyed, { client: null }));
    expect(refused).toMatchObject({ code: 'RECIPIENT_OPTED_OUT', message: expect.stringContaining('+14155550123 has opted out') });
    expect(sms.payloads).toHaveLength(2);
    expect(
      await store.claimIdempotency(JSON.stringify(['', 'after-stop']), 'h', Date.now(), { ttlMs: 1000, staleAfterMs: 1000 }),
    ).toMatchObject({
      kind: 'claimed',
    });
  });

  it('refuses an unkeyed dry run to an opted-out recipient, recording nothing, with or without rate limits', async () => {
    const dryRun = { TWILIO_ACCOUNT_SID: '', TWILIO_AUTH_TOKEN: '', TWILIO_FROM: '' };
    await store.addOptOut('sms', '+14155550123', Date.now());
    // Looked up with the record (one transaction): refused, nothing recorded.
    const refused = await failure(sendNotification(await deps(dryRun), text(), { client: null }));
    expect(refused).toMatchObject({ code: 'RECIPIENT_OPTED_OUT', message: expect.stringContaining('+14155550123 has opted out') });
    expect(await store.listDeliveries(10)).toEqual([]);
    expect(await sendNotification(await deps(dryRun), text('+14155550999'), { client: null })).toMatchObject({ status: 'dry_run' });
    // With a rate limit the lookup comes first: a refused send spends no quota.
    const limited = await deps({ ...dryRun, NOTIFY_RATE_LIMITS: 'sms=1/h' });
    expect((await failure(sendNotification(limited, text(), { client: null }))).code).toBe('RECIPIENT_OPTED_OUT');
    expect(await sendNotification(limited, text('+14155550999'), { client: null })).toMatchObject({ status: 'dry_run' });
    expect(await store.listDeliveries(10)).toHaveLength(2);
  });

  it('records a rejected send as failed with its code, and releases the idempotency key', async () => {
    sms.failWith = new ProviderRejectedError('twilio', 'The To number is not a mobile number.', 21614);
    const err = await failure(sendNotification(await deps(), text(undefined, { idempotency_key: 'k1' }), { client: null }));
    expect(err.code).toBe('PROVIDER_REJECTED');
    expect(await store.listDeliveries(1)).toMatchObject([
      {
        status: 'failed',
        error_code: 'PROVIDER_REJECTED',
        attempts: 1,
        attempt_log: [{ attempt: 1, outcome: 'rejected', vendor_code: 21614 }],
      },
    ]);
    sms.failWith = undefined;
    expect(await sendNotification(await deps(), text(undefined, { idempotency_key: 'k1' }), { client: null })).toMatchObject({
      status: 'sent',
    });
  });

  it('records a send whose outcome was lost as unknown, not failed: the provider may have it', async () => {
    sms.failWith = new DeliveryUnknownError('twilio', 'no answer after the request was sent', 'ECONNRESET');
    expect((await failure(sendNotification(await deps(), text(), { client: null }))).code).toBe('DELIVERY_UNKNOWN');
    expect(await store.listDeliveries(1)).toMatchObject([{ status: 'unknown', error_code: 'DELIVERY_UNKNOWN' }]);
  });

  it('asks Twilio for status callbacks under NOTIFY_PUBLIC_URL, and times each attempt', async () => {
    const before = Date.now();
    await sendNotification(await deps({ NOTIFY_PUBLIC_URL: 'https://notify.example.com/' }), text(), { client: null });
    expect(sms.payloads).toEqual([
      {
        To: '+14155550123',
        Body: 'Disk full',
        From: '+14155550000',
        StatusCallback: `https://notify.example.com/webhooks/twilio?notification=${(await store.listDeliveries(1))[0]!.id}`,
      },
    ]);
    const [record] = await store.listDeliveries(1);
    expect(record!.attempt_log[0]!.at).toBeGreaterThanOrEqual(before);
    expect(record!.attempt_log[0]!.at).toBeLessThanOrEqual(record!.status_updated_at);
  });

  it('stops a call cancelled before the provider call: nothing sent, nothing recorded, the key released', async () => {
    const cancelled = new AbortController();
    cancelled.abort(new Error('client cancelled'));
    for (const key of [undefined, 'k-cancel']) {
      const n = key === undefined ? text() : text(undefined, { idempotency_key: key });
      const err = await failure(sendNotification(await deps(), n, { client: null, signal: cancelled.signal }));
      expect(err.toBody()).toMatchObject({ code: 'CANCELLED', via: 'sms' });
      expect(err.message).toContain('nothing was sent');
    }
    expect(sms.payloads).toHaveLength(0);
    expect(await store.listDeliveries(10)).toEqual([]);
    // The claim was released: the same key sends on a call that is not cancelled.
    expect(await sendNotification(await deps(), text(undefined, { idempotency_key: 'k-cancel' }), { client: null })).toMatchObject({
      status: 'sent',
    });
    expect(sms.payloads).toHaveLength(1);
  });

  it('lets a provider call that started before the cancel finish, and records its outcome', async () => {
    const controller = new AbortController();
    sms.send = async (payload) => {
      sms.payloads.push(payload);
      controller.abort(new Error('client cancelled')); // mid-call
      await new Promise((r) => setTimeout(r, 20));
      return { providerMessageId: 'fake-late' };
    };
    const d = await deps();
    const result = await sendNotification(d, text(undefined, { idempotency_key: 'k-mid' }), { client: null, signal: controller.signal });
    expect(result).toMatchObject({ status: 'sent', provider_message_id: 'fake-late' });
    expect(await store.listDeliveries(1)).toMatchObject([{ id: result.id, status: 'sent', provider_message_id: 'fake-late' }]);
  });

  it('replays under an idempotency key per client, and a replay costs no rate-limit quota', async () => {
    const d = await deps({ NOTIFY_RATE_LIMITS: 'sms=1/h' });
    const first = await sendNotification(d, text(undefined, { idempotency_key: 'deploy-1' }), { client: 'a' });
    const again = await sendNotification(d, text(undefined, { idempotency_key: 'deploy-1' }), { client: 'a' });
    expect(again).toEqual({ ...first, replayed: true });
    expect(sms.payloads).toHaveLength(1);
    const limited = await failure(sendNotification(d, text(undefined, { idempotency_key: 'deploy-2' }), { client: 'a' }));
    expect(limited.code).toBe('RATE_LIMITED');
    expect(limited.details.retryAfterS).toBeGreaterThan(0);
    // For the refusal's log line: the recipient's class, not the number.
    expect(limited.details.recipientClasses).toEqual(['+14…']);
    expect(limited.toBody()).not.toHaveProperty('recipientClasses');
    // Another client's identical key is its own: it sends.
    expect(await sendNotification(d, text(undefined, { idempotency_key: 'deploy-1' }), { client: 'b' })).not.toHaveProperty('replayed');
    expect(sms.payloads).toHaveLength(2);
  });

  it('answers a different payload under a used key with IDEMPOTENCY_CONFLICT', async () => {
    await sendNotification(await deps(), text(undefined, { idempotency_key: 'deploy-7' }), { client: 'ops-bot' });
    const err = await failure(
      sendNotification(await deps(), text(undefined, { idempotency_key: 'deploy-7', body: 'Other' }), { client: 'ops-bot' }),
    );
    expect(err.code).toBe('IDEMPOTENCY_CONFLICT');
    // The key as the client sent it, never the store's client-scoped tuple.
    expect(err.message).toContain('idempotency_key "deploy-7"');
    expect(err.message).not.toContain('ops-bot');
  });

  it('records a dry-run email as the complete MIME message', async () => {
    const result = await sendNotification(
      await deps(),
      { via: 'email', to: 'ops@example.com', subject: 'Hi', body_html: '<p>A &amp; B</p>' },
      { client: null },
    );
    expect(result.status).toBe('dry_run');
    const [record] = await store.listDeliveries(1);
    const raw = (record!.payload as { raw: string }).raw;
    expect(raw).toContain(`X-Notification-ID: ${result.id}`);
    expect(raw).toMatch(/Content-Type: text\/plain[\s\S]*A & B/);
  });
});

/** Resolves once `ready()` returns true, polling on the event loop (no wall-clock waits). */
async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; !ready(); i++) {
    if (i > 10_000) throw new Error('never became ready');
    await new Promise((r) => setImmediate(r));
  }
}

/** The test's store, whose delivery records fail while `failing()` says so. */
function failingRecords(failing: () => boolean): Store {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'writeRecord' && failing()) return async () => Promise.reject(new Error('disk full'));
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

describe('sendNotification: the budget covers the whole path, and one key sends once', () => {
  /** Holds the next SMS payload build until `finish()`; the test moves the clock meanwhile. */
  function slowNextBuild() {
    const real = smsChannel.buildPayload;
    const held = { finish: undefined as (() => void) | undefined };
    vi.spyOn(smsChannel, 'buildPayload').mockImplementationOnce(async (n, ctx) => {
      await new Promise<void>((r) => (held.finish = r));
      return real(n, ctx);
    });
    return held;
  }
  afterEach(() => vi.restoreAllMocks());

  it('a send whose payload building outlives the budget does not send; the duplicate that took over sends once', async () => {
    let t = Date.UTC(2026, 0, 1);
    const d = { ...(await deps({ NOTIFY_SEND_BUDGET_MS: '1000' })), now: () => t };
    const held = slowNextBuild();
    const first = sendNotification(d, text(undefined, { idempotency_key: 'slow' }), { client: null });
    await until(() => held.finish !== undefined);
    t += 1000; // the first call's claim now counts as abandoned
    const second = await sendNotification(d, text(undefined, { idempotency_key: 'slow' }), { client: null });
    expect(second).toMatchObject({ status: 'sent', provider_message_id: 'fake-1' });
    held.finish!();
    const err = await failure(first);
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
    expect(err.message).toMatch(/budget was spent before the provider was called.*nothing was sent/);
    expect(err.details).toMatchObject({ via: 'sms', retryAfterS: 1 });
    expect(sms.payloads).toHaveLength(1);
    // The key still holds the one send's result.
    expect(await sendNotification(d, text(undefined, { idempotency_key: 'slow' }), { client: null })).toEqual({
      ...second,
      replayed: true,
    });
    expect(sms.payloads).toHaveLength(1);
  });

  it('without a key too, a budget spent before the provider call sends and records nothing', async () => {
    let t = Date.UTC(2026, 0, 1);
    const d = { ...(await deps({ NOTIFY_SEND_BUDGET_MS: '1000' })), now: () => t };
    const held = slowNextBuild();
    const pending = sendNotification(d, text(), { client: null });
    await until(() => held.finish !== undefined);
    t += 1000;
    held.finish!();
    expect((await failure(pending)).code).toBe('PROVIDER_UNAVAILABLE');
    expect(sms.payloads).toEqual([]);
    expect(await store.listDeliveries(10)).toEqual([]);
  });

  it('a sent message stays sent when its delivery record cannot be written: no error, and a retry replays', async () => {
    let failRecord = true;
    const d = { ...(await deps()), store: failingRecords(() => failRecord) };
    const sent = await sendNotification(d, text(undefined, { idempotency_key: 'rec' }), { client: null });
    expect(sent).toMatchObject({ status: 'sent', provider_message_id: 'fake-1' });
    failRecord = false;
    expect(await sendNotification(d, text(undefined, { idempotency_key: 'rec' }), { client: null })).toEqual({ ...sent, replayed: true });
    expect(sms.payloads).toHaveLength(1);
  });

  it('a failed send keeps its error when the failure record cannot be written', async () => {
    sms.failWith = new ProviderRejectedError('twilio', 'The To number is not a mobile number.', 21614);
    const d = { ...(await deps()), store: failingRecords(() => true) };
    expect((await failure(sendNotification(d, text(), { client: null }))).code).toBe('PROVIDER_REJECTED');
  });
});
