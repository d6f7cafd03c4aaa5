import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { NotifyError } from '../core/errors.js';
import { silentLogger } from '../core/log.js';
import {
  DeliveryUnknownError,
  ProviderBusyError,
  ProviderRejectedError,
  ProviderTransientError,
  RecipientOptedOutError,
} from './errors.js';
import { sendFailureInfo, sendWithRetry, type RetryOptions } from './retry.js';
import type { Provider, ProviderReceipt, SendContext } from './types.js';

/** A provider that plays a script of outcomes, one per call, on a fake clock. */
function scripted(steps: Array<(() => ProviderReceipt) | Error>, clock: { t: number }, costMs = 10) {
  const calls: SendContext[] = [];
  const provider: Provider<{ n: number }> = {
    name: 'fake',
    async send(_payload, ctx) {
      calls.push(ctx);
      clock.t += costMs;
      const step = steps[calls.length - 1];
      if (step === undefined) throw new Error('script ran out');
      if (step instanceof Error) throw step;
      return step();
    },
  };
  return { provider, calls };
}

function harness(budgetMs = 20_000, random = () => 0.5) {
  const clock = { t: 1_000_000 };
  const sleeps: number[] = [];
  const retries: Array<[number, number, string]> = [];
  const opts: RetryOptions = {
    notificationId: 'ntf_test',
    budgetMs,
    log: silentLogger,
    now: () => clock.t,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.t += ms;
    },
    random,
    onRetry: (a, d, r) => retries.push([a, d, r]),
  };
  return { clock, sleeps, retries, opts };
}

async function rejection(p: Promise<unknown>): Promise<NotifyError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(NotifyError);
    return err as NotifyError;
  }
  throw new Error('expected a rejection');
}

const transient = (opts: ConstructorParameters<typeof ProviderTransientError>[2] = {}) =>
  new ProviderTransientError('fake', 'HTTP 503', { vendorCode: 503, ...opts });

describe('sendWithRetry', () => {
  it('returns the receipt of a first-time success with one attempt', async () => {
    const h = harness();
    const { provider, calls } = scripted([() => ({ providerMessageId: 'm1' })], h.clock);
    const out = await sendWithRetry(provider, { n: 1 }, h.opts);
    expect(out.receipt).toEqual({ providerMessageId: 'm1' });
    expect(out.attempts).toBe(1);
    expect(out.history).toEqual([{ attempt: 1, outcome: 'sent', latencyMs: 10 }]);
    expect(calls[0]!.notificationId).toBe('ntf_test');
    expect(calls[0]!.signal.aborted).toBe(false);
    expect(h.sleeps).toEqual([]);
  });

  it('retries transient failures with exponential full-jitter backoff, then succeeds', async () => {
    const h = harness(20_000, () => 0.5);
    const { provider } = scripted([transient(), transient(), () => ({ providerMessageId: 'm3' })], h.clock);
    const out = await sendWithRetry(provider, { n: 1 }, h.opts);
    expect(out.attempts).toBe(3);
    // ceilings 250 and 500 (base 250, doubled), half of each with random() = 0.5
    expect(h.sleeps).toEqual([125, 250]);
    expect(h.retries).toEqual([
      [1, 125, 'transient: 503'],
      [2, 250, 'transient: 503'],
    ]);
    expect(out.history.map((r) => r.outcome)).toEqual(['transient', 'transient', 'sent']);
  });

  it('leaves no listener on the cancel signal after many real backoff waits', async () => {
    const cancel = new AbortController().signal;
    const { provider } = scripted([...Array.from({ length: 15 }, () => transient()), () => ({ providerMessageId: 'ok' })], { t: 0 }, 0);
    const result = await sendWithRetry(
      provider,
      { n: 1 },
      { notificationId: 'ntf_test', budgetMs: 10_000, log: silentLogger, cancel, baseDelayMs: 1, maxDelayMs: 1, maxAttempts: 20 },
    );
    expect(result.attempts).toBe(16);
    expect(getEventListeners(cancel, 'abort')).toEqual([]);
  });

  it('caps the backoff ceiling at maxDelayMs', async () => {
    const h = harness(1_000_000, () => 0.999);
    const steps = [...Array.from({ length: 7 }, () => transient()), () => ({})];
    const { provider } = scripted(steps, h.clock);
    await sendWithRetry(provider, { n: 1 }, { ...h.opts, maxDelayMs: 1000 });
    expect(Math.max(...h.sleeps)).toBeLessThan(1000);
    expect(h.sleeps[0]).toBeLessThan(250);
  });

  it('honours Retry-After when it is longer than the jittered delay', async () => {
    const h = harness();
    const { provider } = scripted(
      [transient({ retryAfterMs: 3000, rateLimited: true, vendorCode: 429 }), () => ({ providerMessageId: 'ok' })],
      h.clock,
    );
    const out = await sendWithRetry(provider, { n: 1 }, h.opts);
    expect(h.sleeps).toEqual([3000]);
    expect(h.retries[0]![2]).toBe('rate_limited');
    expect(out.history[0]).toMatchObject({ outcome: 'rate_limited', vendorCode: 429 });
  });

  it('never sleeps past the budget: a Retry-After beyond it gives up at once with RATE_LIMITED', async () => {
    const h = harness(5_000);
    const { provider, calls } = scripted([transient({ retryAfterMs: 30_000, rateLimited: true })], h.clock);
    const err = await rejection(sendWithRetry(provider, { n: 1 }, h.opts));
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.details.retryAfterS).toBe(30);
    expect(h.sleeps).toEqual([]);
    expect(calls).toHaveLength(1);
    expect(sendFailureInfo(err)).toMatchObject({ attempts: 1, provider: 'fake' });
  });

  it('gives up with PROVIDER_UNAVAILABLE when transient failures outlast the budget', async () => {
    const h = harness(2_000, () => 0.999);
    const { provider, calls } = scripted(
      Array.from({ length: 20 }, () => transient()),
      h.clock,
      100,
    );
    const err = await rejection(sendWithRetry(provider, { n: 1 }, h.opts));
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
    expect(err.details.retryAfterS).toBeGreaterThanOrEqual(1);
    const spent = h.clock.t - 1_000_000;
    expect(spent).toBeLessThanOrEqual(2_000);
    const info = sendFailureInfo(err)!;
    expect(info.attempts).toBe(calls.length);
    expect(info.attempts).toBeGreaterThan(1);
    expect(err.cause).toBeInstanceOf(ProviderTransientError);
  });

  it('reports RATE_LIMITED only when the last failure was a rate limit', async () => {
    const h = harness(600, () => 0);
    const { provider } = scripted([transient({ rateLimited: true, retryAfterMs: 100 }), transient({ retryAfterMs: 10_000 })], h.clock);
    const err = await rejection(sendWithRetry(provider, { n: 1 }, h.opts));
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
    expect(err.details.retryAfterS).toBe(10);
  });

  it('stops at maxAttempts even with budget left', async () => {
    const h = harness(1_000_000);
    const { provider, calls } = scripted(
      Array.from({ length: 10 }, () => transient()),
      h.clock,
    );
    const err = await rejection(sendWithRetry(provider, { n: 1 }, { ...h.opts, maxAttempts: 3 }));
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
    expect(calls).toHaveLength(3);
  });

  it('answers RATE_LIMITED saying nothing was sent when the send waited out its budget for a slot, and does not retry it', async () => {
    const h = harness(5_000);
    const { provider, calls } = scripted([new ProviderBusyError('fake', 3, 4_800), () => ({})], h.clock);
    const err = await rejection(sendWithRetry(provider, { n: 1 }, h.opts));
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.details.retryAfterS).toBe(5);
    expect(err.message).toMatch(/^Try again in \d+ s; nothing was sent: this server runs at most 3 fake requests at a time/);
    expect(calls).toHaveLength(1);
    expect(h.sleeps).toEqual([]);
    expect(sendFailureInfo(err)?.history).toEqual([{ attempt: 1, outcome: 'dropped', latencyMs: 10 }]);
  });

  it('does not start a retry that would have less than MIN_SEND_WINDOW_MS of the budget left', async () => {
    const h = harness(600);
    // After 10 ms, a 400 ms wait would leave 190 ms for the retry: too little, give up now.
    const { provider, calls } = scripted([transient({ retryAfterMs: 400 }), () => ({})], h.clock);
    const err = await rejection(sendWithRetry(provider, { n: 1 }, h.opts));
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
    expect(calls).toHaveLength(1);
    expect(h.sleeps).toEqual([]);
  });

  it('hands the provider an aborted signal when the budget is already spent', async () => {
    let seen: boolean | undefined;
    const provider: Provider<null> = {
      name: 'fake',
      async send(_p, ctx) {
        seen = ctx.signal.aborted;
        throw new ProviderTransientError('fake', 'nothing was sent');
      },
    };
    const err = await rejection(sendWithRetry(provider, null, { notificationId: 'ntf_0', budgetMs: 0, log: silentLogger }));
    expect(seen).toBe(true);
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
  });

  it("tells the provider when the attempt's budget ends, on the real clock", async () => {
    const h = harness(5_000);
    const { provider, calls } = scripted([() => ({})], h.clock);
    const before = Date.now();
    await sendWithRetry(provider, { n: 1 }, h.opts);
    expect(calls[0]!.deadline).toBeGreaterThanOrEqual(before + 5_000);
    expect(calls[0]!.deadline).toBeLessThanOrEqual(Date.now() + 5_000);
  });

  it('does not retry a rejection, and tells what was refused', async () => {
    const h = harness();
    const cause = new ProviderRejectedError('fake', "'To' is not a valid phone number; use E.164 such as +14155550100.", 21211);
    const { provider, calls } = scripted([cause], h.clock);
    const err = await rejection(sendWithRetry(provider, { n: 1 }, h.opts));
    expect(err.code).toBe('PROVIDER_REJECTED');
    expect(err.message).toContain('E.164');
    expect(err.cause).toBe(cause);
    expect(calls).toHaveLength(1);
    expect(sendFailureInfo(err)).toMatchObject({ attempts: 1, vendorCode: 21211 });
  });

  it('maps an opt-out to RECIPIENT_OPTED_OUT without retrying', async () => {
    const h = harness();
    const { provider, calls } = scripted([new RecipientOptedOutError('fake', 'The recipient replied STOP.', 21610)], h.clock);
    const err = await rejection(sendWithRetry(provider, { n: 1 }, h.opts));
    expect(err.code).toBe('RECIPIENT_OPTED_OUT');
    expect(calls).toHaveLength(1);
  });

  it('never retries a delivery whose outcome is unknown', async () => {
    const h = harness();
    const { provider, calls } = scripted([new DeliveryUnknownError('fake', 'timed out after the request was sent'), () => ({})], h.clock);
    const err = await rejection(sendWithRetry(provider, { n: 1 }, h.opts));
    expect(err.code).toBe('DELIVERY_UNKNOWN');
    expect(calls).toHaveLength(1);
    expect(h.sleeps).toEqual([]);
  });

  it('treats an unclassified error as DELIVERY_UNKNOWN, not as retryable', async () => {
    const h = harness();
    const { provider, calls } = scripted([new TypeError('boom'), () => ({})], h.clock);
    const err = await rejection(sendWithRetry(provider, { n: 1 }, h.opts));
    expect(err.code).toBe('DELIVERY_UNKNOWN');
    expect(calls).toHaveLength(1);
  });

  it('aborts the attempt signal when the budget ends (real timer, short budget)', async () => {
    let seen: AbortSignal | undefined;
    const provider: Provider<null> = {
      name: 'hang',
      send: (_p, ctx) =>
        new Promise((_resolve, reject) => {
          seen = ctx.signal;
          ctx.signal.addEventListener('abort', () =>
            reject(new DeliveryUnknownError('hang', 'no answer before the budget ran out', undefined, ctx.signal.reason)),
          );
        }),
    };
    const err = await rejection(sendWithRetry(provider, null, { notificationId: 'ntf_x', budgetMs: 50, log: silentLogger }));
    expect(err.code).toBe('DELIVERY_UNKNOWN');
    expect(seen?.aborted).toBe(true);
  });

  it('reports every attempt through onAttempt', async () => {
    const h = harness();
    const records: unknown[] = [];
    const { provider } = scripted([transient(), () => ({})], h.clock);
    await sendWithRetry(provider, { n: 1 }, { ...h.opts, onAttempt: (r) => records.push(r) });
    expect(records).toEqual([
      { attempt: 1, outcome: 'transient', vendorCode: 503, latencyMs: 10 },
      { attempt: 2, outcome: 'sent', latencyMs: 10 },
    ]);
  });

  it('a cancel during a backoff wait ends the send at once with CANCELLED, and no retry is made', async () => {
    const h = harness();
    const { provider, calls } = scripted([transient({ retryAfterMs: 5_000 }), () => ({})], h.clock);
    const cancel = new AbortController();
    // This sleep never ends by itself: only the cancel can end the wait.
    const waiting = sendWithRetry(
      provider,
      { n: 1 },
      {
        ...h.opts,
        cancel: cancel.signal,
        sleep: () => new Promise<void>(() => {}),
        onRetry: () => setImmediate(() => cancel.abort(new Error('client cancelled'))),
      },
    );
    const err = await rejection(waiting);
    expect(err.code).toBe('CANCELLED');
    expect(err.message).toMatch(/after 1 attempt\(s\) that failed without sending\); nothing was sent/);
    expect(calls).toHaveLength(1);
  });

  it('the default backoff wait ends on a cancel too (real timers)', async () => {
    const { provider, calls } = scripted([transient({ retryAfterMs: 15_000 }), () => ({})], { t: 0 });
    const cancel = new AbortController();
    const err = await rejection(
      sendWithRetry(
        provider,
        { n: 1 },
        {
          notificationId: 'ntf_c',
          budgetMs: 20_000,
          log: silentLogger,
          cancel: cancel.signal,
          onRetry: () => setTimeout(() => cancel.abort(), 20),
        },
      ),
    );
    expect(err.code).toBe('CANCELLED');
    expect(calls).toHaveLength(1);
  }, 5_000);
});

describe('sendWithRetry: a failover provider’s endpoints', () => {
  /** Two endpoints: `a` refuses (transient) and the call fails over to `b`, which answers as `second` says. */
  function failover(second: () => ProviderReceipt | Error, clock: { t: number }) {
    const provider: Provider<{ n: number }> = {
      name: 'fake',
      async send(_payload, ctx) {
        clock.t += 7;
        ctx.failedOver?.(Object.assign(new ProviderTransientError('fake', 'a refused', { vendorCode: 421 }), { endpoint: { name: 'a' } }));
        clock.t += 5;
        const answer = second();
        if (answer instanceof Error) throw answer;
        return answer;
      },
    };
    return provider;
  }

  it('logs each endpoint as an attempt of its own, numbered in order, timed from where the one before ended', async () => {
    const { clock, opts } = harness();
    const seen: number[] = [];
    const result = await sendWithRetry(
      failover(() => ({ providerMessageId: 'm', endpoint: { name: 'b', digest: 'd'.repeat(64) } }), clock),
      { n: 1 },
      { ...opts, onAttempt: (a) => seen.push(a.attempt) },
    );
    expect(result.attempts).toBe(2);
    expect(result.history).toEqual([
      { attempt: 1, outcome: 'transient', vendorCode: 421, latencyMs: 7, endpoint: 'a' },
      { attempt: 2, outcome: 'sent', latencyMs: 5, endpoint: 'b', digest: 'd'.repeat(64) },
    ]);
    expect(seen).toEqual([1, 2]);
  });

  it('a failure after a failover counts every endpoint tried, in the error and its history', async () => {
    const { clock, opts } = harness();
    const unknown = Object.assign(new DeliveryUnknownError('fake', 'no answer after the request'), { endpoint: { name: 'b' } });
    const err = await rejection(
      sendWithRetry(
        failover(() => unknown, clock),
        { n: 1 },
        opts,
      ),
    );
    expect(err.code).toBe('DELIVERY_UNKNOWN');
    expect(sendFailureInfo(err)).toMatchObject({
      attempts: 2,
      history: [
        { attempt: 1, outcome: 'transient', endpoint: 'a' },
        { attempt: 2, outcome: 'unknown', endpoint: 'b' },
      ],
    });
  });
});
