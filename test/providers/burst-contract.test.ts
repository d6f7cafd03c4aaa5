/**
 * The provider burst contract (issue 16: nothing reaches a provider after its call answered),
 * one suite run for each HTTP provider against a slow peer of its own kind: at most
 * maxConcurrent requests at once, the rest cut off in flight at the budget or dropped unsent;
 * a burst larger than any client queue (Slack's has 100) sends nothing late; a request in
 * flight at the budget is hung up; a spent budget sends nothing; a dropped send says so.
 * Email's gated SMTP peer has its own burst suite (./smtp.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTwilioProvider, type SmsPayload } from '../../src/channels/sms/twilio.js';
import { createSlackProvider, type SlackPayload } from '../../src/channels/slack/web-api.js';
import type { NotifyError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { ProviderTransientError } from '../../src/providers/errors.js';
import { sendFailureInfo, sendWithRetry } from '../../src/providers/retry.js';
import type { Provider } from '../../src/providers/types.js';
import { burst, expectNothingAfterAnswer, sleep, startSlowHttpPeer, type SlowPeer } from '../helpers/burst.js';
import { caught } from '../helpers/caught.js';

/** One provider under the contract: how its peer answers, how a message is keyed and built, how the provider is made. */
interface Subject<P> {
  /** As the tests name it. */
  vendor: string;
  /** As the provider's slots name it in a RATE_LIMITED answer. */
  slots: string;
  answer: { status: number; json: unknown };
  /** The message's key from the request's form fields: the field the payload carries it in. */
  keyOf: (form: Record<string, string>) => string;
  payload: (key: string) => P;
  create: (apiUrl: string, maxConcurrent?: number) => Promise<Provider<P>>;
}

const SID = `AC${'a'.repeat(32)}`;

const twilio: Subject<SmsPayload> = {
  vendor: 'Twilio',
  slots: 'twilio',
  answer: { status: 201, json: { sid: `SM${'c'.repeat(32)}`, status: 'queued' } },
  keyOf: (form) => form.Body ?? '',
  payload: (key) => ({ To: '+14155550100', Body: key, From: '+14155550111' }),
  create: (apiUrl, maxConcurrent) =>
    createTwilioProvider({
      accountSid: SID,
      authToken: 'test-auth-token',
      apiUrl,
      timeoutMs: 10_000,
      log: silentLogger,
      ...(maxConcurrent !== undefined ? { maxConcurrent } : {}),
    }),
};

const slack: Subject<SlackPayload> = {
  vendor: 'Slack',
  slots: 'slack',
  answer: { status: 200, json: { ok: true, channel: 'C0123ABCD', ts: '1712345678.000100' } },
  keyOf: (form) => form.text ?? '',
  payload: (key) => ({ channel: 'C0123ABCD', text: key }),
  create: (apiUrl, maxConcurrent) =>
    createSlackProvider({
      token: 'xoxb-test-token',
      apiUrl,
      timeoutMs: 10_000,
      log: silentLogger,
      ...(maxConcurrent !== undefined ? { maxConcurrent } : {}),
    }),
};

// A request takes DELAY_MS; a second wave starts with BUDGET_MS - DELAY_MS left, too little to finish.
const DELAY_MS = 1_000;
const BUDGET_MS = 1_600;

function burstContract<P>(subject: Subject<P>): void {
  describe(`${subject.vendor} provider under a burst against a slow ${subject.vendor}`, () => {
    let peer: SlowPeer;

    beforeAll(async () => {
      peer = await startSlowHttpPeer({ delayMs: DELAY_MS, ...subject.answer, keyOf: subject.keyOf });
      // One request first, outside any budget: a client's first request loads what it lazily
      // needs, which on a loaded machine would eat into the first wave's budget below.
      const warm = await subject.create(peer.origin);
      await warm.send(subject.payload('warm-up'), { notificationId: 'ntf_warm', signal: new AbortController().signal });
      await warm.close?.();
    });
    afterAll(async () => {
      await peer?.close();
    });

    const send =
      (provider: Provider<P>, budgetMs = BUDGET_MS) =>
      (key: string) =>
        sendWithRetry(provider, subject.payload(key), { notificationId: `ntf_${key}`, budgetMs, log: silentLogger });

    it('runs at most maxConcurrent requests at once; the next ones go in order, are aborted in flight at the budget, or are dropped unsent', async () => {
      peer.arrivals.length = 0;
      const provider = await subject.create(peer.origin, 2);
      const answers = await burst(
        Array.from({ length: 6 }, (_, i) => `wave-${i}`),
        send(provider),
      );
      await sleep(DELAY_MS + 500); // whatever a queue still held would arrive now
      expectNothingAfterAnswer(answers, peer, 2);
      // 0-1 sent, 2-3 started when those finished and were cut off at the budget, 4-5 never got a slot.
      expect(answers.map((a) => a.code)).toEqual(['sent', 'sent', 'DELIVERY_UNKNOWN', 'DELIVERY_UNKNOWN', 'RATE_LIMITED', 'RATE_LIMITED']);
    });

    it("sends nothing late when the burst is larger than a client's own queue (110 at once; Slack's client queues 100)", async () => {
      peer.arrivals.length = 0;
      const provider = await subject.create(peer.origin);
      const keys = Array.from({ length: 110 }, (_, i) => `big-${i}`);
      // Every request outlasts this budget: the first 5 (the default slots) are cut off in flight, the rest never start.
      const answers = await burst(keys, send(provider, 600));
      await sleep(DELAY_MS + 500);
      expectNothingAfterAnswer(answers, peer, 5);
      // At least the first 5 are cut off in flight. On a loaded machine the burst spreads out,
      // and a later call may still get a freed slot with budget left: it is cut off too, never late.
      const cut = answers.filter((a) => a.code === 'DELIVERY_UNKNOWN').length;
      expect(cut).toBeGreaterThanOrEqual(5);
      expect(cut).toBeLessThan(20);
      expect(answers.filter((a) => a.code === 'RATE_LIMITED')).toHaveLength(110 - cut);
      expect(peer.arrivals).toHaveLength(cut);
    });

    it(`aborts a request still in flight at the budget: ${subject.vendor} sees the hang-up, the call answers DELIVERY_UNKNOWN`, async () => {
      peer.arrivals.length = 0;
      const provider = await subject.create(peer.origin);
      const err = await caught(send(provider, 400)('cut-off'));
      await sleep(100);
      expect(peer.arrivals).toEqual([expect.objectContaining({ key: 'cut-off', abortedAt: expect.any(Number) })]);
      expect((err as NotifyError).code).toBe('DELIVERY_UNKNOWN');
      expect((err as Error).message).toContain('budget ran out while the request was in flight');
    });

    it('sends nothing for a call whose budget is already spent', async () => {
      peer.arrivals.length = 0;
      const provider = await subject.create(peer.origin);
      const spent = new AbortController();
      spent.abort(new Error('budget spent'));
      const err = await caught(provider.send(subject.payload('late'), { notificationId: 'ntf_late', signal: spent.signal }));
      expect(err).toBeInstanceOf(ProviderTransientError);
      expect((err as Error).message).toContain('nothing was sent');
      await sleep(100);
      expect(peer.arrivals).toEqual([]);
    });

    it('answers a dropped send RATE_LIMITED with retry_after_s, saying nothing was sent, and logs the attempt as dropped', async () => {
      peer.arrivals.length = 0;
      const provider = await subject.create(peer.origin, 1);
      const first = send(provider)('holder').catch((e: unknown) => e);
      const err = await caught(send(provider, 500)('waiter'));
      await first;
      expect((err as NotifyError).code).toBe('RATE_LIMITED');
      expect((err as NotifyError).details.retryAfterS).toBeGreaterThanOrEqual(1);
      expect((err as Error).message).toMatch(
        new RegExp(`^Try again in \\d+ s; nothing was sent: this server runs at most 1 ${subject.slots} request at a time`),
      );
      expect(sendFailureInfo(err)?.history).toEqual([
        expect.objectContaining({ attempt: 1, outcome: 'dropped', latencyMs: expect.any(Number) }),
      ]);
      expect(peer.arrivals.map((a) => a.key)).toEqual(['holder']);
    });
  });
}

burstContract(twilio);
burstContract(slack);
