import { describe, expect, it } from 'vitest';
import { ProviderBusyError, ProviderTransientError, SendCancelledError } from './errors.js';
import { Slots } from './slots.js';
import type { SendContext } from './types.js';

/** A call that settles when told to. */
function deferred() {
  let resolve!: (v: string) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<string>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function budget(ms?: number) {
  const controller = new AbortController();
  const ctx: SendContext = {
    notificationId: 'ntf_t',
    signal: controller.signal,
    ...(ms === undefined ? {} : { deadline: Date.now() + ms }),
  };
  return { ctx, abort: () => controller.abort(new Error('budget')) };
}

const settled = () => new Promise((r) => setImmediate(r));

describe('Slots', () => {
  it('drops a cancelled waiter unstarted, but lets a started call run on through its cancel', async () => {
    const slots = new Slots('fake', 1);
    const first = deferred();
    const cancelFirst = new AbortController();
    const running = slots.run({ ...budget().ctx, cancel: cancelFirst.signal }, () => first.promise);
    const cancelSecond = new AbortController();
    let secondStarted = false;
    const waiting = slots
      .run({ ...budget().ctx, cancel: cancelSecond.signal }, async () => {
        secondStarted = true;
        return 'second';
      })
      .catch((e: unknown) => e);
    await settled();
    expect(slots.stats).toEqual({ inFlight: 1, waiting: 1 });
    cancelSecond.abort();
    cancelFirst.abort();
    expect(await waiting).toBeInstanceOf(SendCancelledError);
    expect(slots.stats).toEqual({ inFlight: 1, waiting: 0 });
    first.resolve('first');
    expect(await running).toBe('first');
    expect(secondStarted).toBe(false);
    // Already cancelled: never starts.
    const cancelled = new AbortController();
    cancelled.abort();
    await expect(slots.run({ ...budget().ctx, cancel: cancelled.signal }, async () => 'x')).rejects.toBeInstanceOf(SendCancelledError);
    expect(slots.stats).toEqual({ inFlight: 0, waiting: 0 });
  });

  it('runs at most `limit` calls at once and starts the waiters in arrival order', async () => {
    const slots = new Slots('fake', 2);
    const started: number[] = [];
    const calls = [0, 1, 2, 3].map(() => deferred());
    const runs = calls.map((c, i) =>
      slots
        .run(budget().ctx, () => {
          started.push(i);
          return c.promise;
        })
        .catch((e: unknown) => e),
    );
    await settled();
    expect(started).toEqual([0, 1]);
    expect(slots.stats).toEqual({ inFlight: 2, waiting: 2 });
    calls[1]!.resolve('b');
    await settled();
    expect(started).toEqual([0, 1, 2]);
    calls[0]!.reject(new Error('x'));
    await settled();
    expect(started).toEqual([0, 1, 2, 3]);
    calls[2]!.resolve('c');
    calls[3]!.resolve('d');
    expect(await Promise.all(runs)).toEqual([new Error('x'), 'b', 'c', 'd']);
    expect(slots.stats).toEqual({ inFlight: 0, waiting: 0 });
  });

  it('drops a waiter whose budget ends in the queue, without ever starting its call', async () => {
    const slots = new Slots('fake', 1);
    const holder = deferred();
    void slots.run(budget().ctx, () => holder.promise);
    const waiter = budget();
    let ran = false;
    const dropped = slots.run(waiter.ctx, async () => {
      ran = true;
      return 'never';
    });
    waiter.abort();
    const err = await dropped.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderBusyError);
    expect(err).toMatchObject({ provider: 'fake', limit: 1 });
    holder.resolve('done');
    await settled();
    expect(ran).toBe(false);
    expect(slots.stats).toEqual({ inFlight: 0, waiting: 0 });
  });

  it('drops a waiter granted a slot with too little budget left, and passes the slot on', async () => {
    const slots = new Slots('fake', 1, 250);
    const holder = deferred();
    void slots.run(budget().ctx, () => holder.promise);
    const hurried = slots.run(budget(100).ctx, async () => 'hurried');
    const patient = slots.run(budget(10_000).ctx, async () => 'patient');
    holder.resolve('done');
    await expect(hurried).rejects.toBeInstanceOf(ProviderBusyError);
    await expect(patient).resolves.toBe('patient');
  });

  it('answers at the budget but keeps the slot until the call itself settles', async () => {
    const slots = new Slots('fake', 1);
    const slow = deferred();
    const b = budget();
    const running = slots.run(b.ctx, () => slow.promise);
    b.abort();
    await expect(running).rejects.toThrow('budget');
    expect(slots.stats.inFlight).toBe(1);
    slow.reject(new Error('aborted late'));
    await settled();
    expect(slots.stats.inFlight).toBe(0);
  });

  it('starts nothing when the budget is already spent', async () => {
    const slots = new Slots('fake', 1);
    const b = budget();
    b.abort();
    let ran = false;
    const err = await slots
      .run(b.ctx, async () => {
        ran = true;
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderTransientError);
    expect((err as Error).message).toContain('nothing was sent');
    expect(ran).toBe(false);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new Slots('fake', 0)).toThrow(RangeError);
    expect(() => new Slots('fake', 1.5)).toThrow(RangeError);
  });
});
