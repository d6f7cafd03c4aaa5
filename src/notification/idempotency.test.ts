import { getEventListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NotifyError } from '../core/errors.js';
import { createLogger, silentLogger } from '../core/log.js';
import { StoreUnavailableError } from '../store/errors.js';
import { openSqliteStore, type SqliteStore } from '../store/sqlite/store.js';
import { runIdempotent } from '../../test/helpers/idempotent.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

let dir: string;
let store: SqliteStore;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'notify-idem-'));
  store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function counter<R>(result: R, delayMs = 0, fail?: Error) {
  const fn = async () => {
    fn.calls++;
    if (delayMs) await sleep(delayMs);
    if (fail) throw fail;
    return result;
  };
  fn.calls = 0;
  return fn;
}

async function codeOf(p: Promise<unknown>): Promise<NotifyError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NotifyError);
  return err as NotifyError;
}

/** A send that counts its calls and answers only once released. */
function gatedSend() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let calls = 0;
  const send = async () => {
    calls++;
    await gate;
    return { id: 'ntf_1' };
  };
  return { send, release, count: () => calls };
}

/** The store, with its claim release failing as a store that is down while `failing()` says so. */
function releaseFails(failing: () => boolean): SqliteStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== 'releaseIdempotency') return Reflect.get(target, prop, receiver);
      return async (...args: Parameters<SqliteStore['releaseIdempotency']>) => {
        if (failing()) throw new StoreUnavailableError('sqlite', 'disk I/O error');
        return target.releaseIdempotency(...args);
      };
    },
  });
}

describe('runIdempotent', () => {
  it('sends once, then replays the stored result for the same payload', async () => {
    const send = counter({ id: 'ntf_1', status: 'sent' });
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 1000 };
    expect(await runIdempotent(opts, send)).toEqual({ result: { id: 'ntf_1', status: 'sent' }, replayed: false });
    expect(await runIdempotent(opts, send)).toEqual({ result: { id: 'ntf_1', status: 'sent' }, replayed: true });
    expect(send.calls).toBe(1);
  });

  it('rejects a different payload under a live key as IDEMPOTENCY_CONFLICT, while pending and when done', async () => {
    const slow = counter({ id: 'ntf_1' }, 100);
    const first = runIdempotent({ store, key: 'k', payloadHash: 'h1', budgetMs: 1000 }, slow);
    await sleep(10);
    const other = counter({ id: 'ntf_2' });
    const pending = await codeOf(runIdempotent({ store, key: 'k', payloadHash: 'h2', budgetMs: 1000 }, other));
    expect(pending.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(pending.details.path).toBe('/idempotency_key');
    await first;
    const done = await codeOf(runIdempotent({ store, key: 'k', payloadHash: 'h2', budgetMs: 1000 }, other));
    expect(done.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(other.calls).toBe(0);
  });

  it('lets a key expire after the ttl', async () => {
    let t = 1_000_000;
    const now = () => t;
    const send = counter({ id: 'ntf_1' });
    await runIdempotent({ store, key: 'k', payloadHash: 'h1', budgetMs: 1000, ttlMs: 5000, now }, send);
    t += 4999;
    expect((await runIdempotent({ store, key: 'k', payloadHash: 'h1', budgetMs: 1000, ttlMs: 5000, now }, send)).replayed).toBe(true);
    t += 1;
    const fresh = await runIdempotent({ store, key: 'k', payloadHash: 'h2', budgetMs: 1000, ttlMs: 5000, now }, counter({ id: 'ntf_2' }));
    expect(fresh).toEqual({ result: { id: 'ntf_2' }, replayed: false });
    expect(send.calls).toBe(1);
  });

  it('defaults the ttl to 24 h', async () => {
    let t = 1_000_000;
    const now = () => t;
    const send = counter({ id: 'ntf_1' });
    await runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 1000, now }, send);
    t += 24 * 3_600_000 - 1;
    expect((await runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 1000, now }, send)).replayed).toBe(true);
    t += 1;
    expect((await runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 1000, now }, send)).replayed).toBe(false);
    expect(send.calls).toBe(2);
  });

  it('makes a duplicate that arrives mid-send wait for the result and replay it', async () => {
    const { send, release, count } = gatedSend();
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 10_000, pollMs: 10 };
    const first = runIdempotent(opts, send);
    await sleep(5); // let the first claim
    let dupDone = false;
    // The call's signal outlives its polls: none of them may leave a listener on it.
    const signal = new AbortController().signal;
    const dup = runIdempotent({ ...opts, signal }, send).finally(() => (dupDone = true));
    await sleep(100);
    expect(dupDone).toBe(false); // still waiting: the first has not finished
    release();
    expect(await dup).toEqual({ result: { id: 'ntf_1' }, replayed: true });
    expect(getEventListeners(signal, 'abort')).toEqual([]);
    expect(await first).toEqual({ result: { id: 'ntf_1' }, replayed: false });
    expect(count()).toBe(1);
  });

  it('a duplicate cancelled while it waits stops at once with CANCELLED, sends nothing, and leaves the first call alone', async () => {
    const { send, release, count } = gatedSend();
    const first = runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 60_000 }, send);
    await sleep(5);
    const cancel = new AbortController();
    // A poll far longer than the test's timeout: only the cancel can end the wait.
    const dup = codeOf(runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 60_000, pollMs: 60_000, signal: cancel.signal }, send));
    await sleep(20);
    cancel.abort();
    const err = await dup;
    expect(err.code).toBe('CANCELLED');
    expect(err.message).toMatch(/this call sent nothing/);
    release();
    expect(await first).toEqual({ result: { id: 'ntf_1' }, replayed: false });
    expect(count()).toBe(1);
  }, 5_000);

  it('answers IDEMPOTENCY_IN_PROGRESS with retry_after_s when the first is still unresolved after the budget', async () => {
    const { send, release, count } = gatedSend();
    const first = runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 30_000 }, send);
    await sleep(5);
    const started = Date.now();
    const err = await codeOf(runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 100, pollMs: 10 }, send));
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(err.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(err.details.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(err.toBody()).toMatchObject({ code: 'IDEMPOTENCY_IN_PROGRESS', retry_after_s: err.details.retryAfterS });
    // It says what is true: the other call may be sending; this one sent nothing.
    expect(err.message).toMatch(
      /Another call with idempotency_key "k" is still sending it; this call sent nothing\. Retry the same call in \d+ s/,
    );
    expect(err.message).not.toMatch(/twice/);
    // Once the first finishes, the retry replays.
    release();
    await first;
    expect((await runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 100 }, send)).replayed).toBe(true);
    expect(count()).toBe(1);
  });

  it('takes over a claim abandoned before its provider call once its budget has passed, and sends', async () => {
    const T = 1_000_000;
    // A process claimed the key and died before it reached the provider (phase `claimed`).
    expect(await store.claimIdempotency('k', 'h', T, { ttlMs: 86_400_000, staleAfterMs: 1000 })).toMatchObject({
      kind: 'claimed',
      phase: 'claimed',
    });
    const send = counter({ id: 'ntf_2' });
    // Arrives half-way through the dead owner's budget; its clock moves 100 ms per reading.
    let t = T + 400;
    const ticking = () => (t += 100);
    const early = await codeOf(runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 1000, now: ticking, pollMs: 1 }, send));
    expect(early.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(early.details.retryAfterS).toBe(1);
    expect(send.calls).toBe(0);
    // Just before the budget has passed: still in progress; at it: taken over.
    const readings =
      (...values: number[]) =>
      () =>
        values.length > 1 ? values.shift()! : values[0]!;
    const before = await codeOf(
      runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 1000, now: readings(T + 999, T + 999, T + 5000) }, send),
    );
    expect(before.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(await runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 1000, now: () => T + 1000 }, send)).toEqual({
      result: { id: 'ntf_2' },
      replayed: false,
    });
    expect(send.calls).toBe(1);
  });

  it('a waiting duplicate does not take over mid-wait; its retry does', async () => {
    await store.claimIdempotency('k', 'h', Date.now(), { ttlMs: 86_400_000, staleAfterMs: 1000 });
    const send = counter({ id: 'ntf_2' });
    const err = await codeOf(runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 120, pollMs: 10 }, send));
    expect(err.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(send.calls).toBe(0);
    expect((await runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 120 }, send)).replayed).toBe(false);
    expect(send.calls).toBe(1);
  });

  it('releases the claim when the send fails and rethrows the error', async () => {
    const boom = new NotifyError('PROVIDER_UNAVAILABLE', 'smtp down', { retryAfterS: 3 });
    const failing = counter({ id: 'x' }, 0, boom);
    await expect(runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 1000 }, failing)).rejects.toBe(boom);
    const ok = counter({ id: 'ntf_ok' });
    expect(await runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 1000 }, ok)).toEqual({
      result: { id: 'ntf_ok' },
      replayed: false,
    });
    // Released means gone: even another payload may use the key now that nothing was sent under it.
    await expect(runIdempotent({ store, key: 'k2', payloadHash: 'a', budgetMs: 1000 }, failing)).rejects.toBe(boom);
    expect((await runIdempotent({ store, key: 'k2', payloadHash: 'b', budgetMs: 1000 }, ok)).replayed).toBe(false);
  });

  it('a refused send whose claim release meets a store that is down releases it once the store answers, so it is sent later, not "may have started"', async () => {
    let down = 2;
    const flaky = releaseFails(() => down-- > 0);
    const refused = new NotifyError('PROVIDER_UNAVAILABLE', 'smtp 451', { retryAfterS: 1 });
    await expect(
      runIdempotent({ store: flaky, key: 'k', payloadHash: 'h', budgetMs: 5000 }, counter({ id: 'x' }, 0, refused)),
    ).rejects.toBe(refused);
    await vi.waitFor(() => expect(down).toBe(-1), { timeout: 4000, interval: 50 });
    // Whoever takes the key over after the budget sends: the refused attempt left no "sending" claim.
    const ok = counter({ id: 'ntf_ok' });
    expect(await runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 5000, now: () => Date.now() + 10_000 }, ok)).toEqual({
      result: { id: 'ntf_ok' },
      replayed: false,
    });
  });

  it('stops trying the release again once the claim budget has passed', async () => {
    let tries = 0;
    const down = releaseFails(() => ++tries > 0);
    const refused = new NotifyError('PROVIDER_UNAVAILABLE', 'smtp 451', { retryAfterS: 1 });
    await expect(runIdempotent({ store: down, key: 'k', payloadHash: 'h', budgetMs: 1200 }, counter({ id: 'x' }, 0, refused))).rejects.toBe(
      refused,
    );
    await sleep(2500);
    const seen = tries;
    expect(seen).toBeGreaterThanOrEqual(2);
    expect(seen).toBeLessThanOrEqual(3);
    await sleep(1000);
    expect(tries).toBe(seen);
  });

  it('keeps DELIVERY_UNKNOWN under the key and replays it to duplicates instead of sending again', async () => {
    const unknown = new NotifyError('DELIVERY_UNKNOWN', 'the provider may have sent it', { via: 'sms' });
    const failing = counter({ id: 'x' }, 20, unknown);
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 1000, pollMs: 5 };
    const [first, waiting] = await Promise.allSettled([runIdempotent(opts, failing), runIdempotent(opts, failing)]);
    expect(first).toEqual({ status: 'rejected', reason: unknown });
    expect(waiting.status).toBe('rejected');
    const replayed = (waiting as PromiseRejectedResult).reason as NotifyError;
    expect(replayed).toBeInstanceOf(NotifyError);
    expect(replayed.toBody()).toEqual({
      code: 'DELIVERY_UNKNOWN',
      message: 'the provider may have sent it (Replayed for idempotency_key "k": this call sent nothing.)',
      via: 'sms',
    });
    const later = await codeOf(runIdempotent(opts, counter({ id: 'y' })));
    expect(later.code).toBe('DELIVERY_UNKNOWN');
    expect(failing.calls).toBe(1);
    // A caller may choose which failures are final.
    const rejected = new NotifyError('PROVIDER_REJECTED', 'bad number');
    const opts2 = { ...opts, key: 'k2', isFinalFailure: (e: unknown) => e instanceof NotifyError && e.code === 'PROVIDER_REJECTED' };
    await expect(runIdempotent(opts2, counter({ id: 'x' }, 0, rejected))).rejects.toBe(rejected);
    expect((await codeOf(runIdempotent(opts2, counter({ id: 'z' })))).code).toBe('PROVIDER_REJECTED');
  });

  it('50 simultaneous duplicates in one process make exactly one send, and all get its result', async () => {
    const send = counter({ id: 'ntf_once', status: 'sent' }, 80);
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () => runIdempotent({ store, key: 'burst', payloadHash: 'h', budgetMs: 5000, pollMs: 5 }, send)),
    );
    expect(send.calls).toBe(1);
    expect(outcomes.filter((o) => !o.replayed)).toHaveLength(1);
    expect(new Set(outcomes.map((o) => JSON.stringify(o.result)))).toEqual(new Set([JSON.stringify({ id: 'ntf_once', status: 'sent' })]));
  });

  it('one send across several store connections to the same file', async () => {
    const stores = [
      store,
      ...(await Promise.all([1, 2, 3].map(() => openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger })))),
    ];
    try {
      const send = counter({ id: 'ntf_shared' }, 50);
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          runIdempotent({ store: stores[i % stores.length]!, key: 'shared', payloadHash: 'h', budgetMs: 5000, pollMs: 5 }, send),
        ),
      );
      expect(send.calls).toBe(1);
      expect(outcomes.filter((o) => o.replayed)).toHaveLength(39);
      expect(outcomes.every((o) => (o.result as { id: string }).id === 'ntf_shared')).toBe(true);
    } finally {
      for (const s of stores.slice(1)) await s.close();
    }
  });

  it('when the first send fails, a waiting duplicate gets to send', async () => {
    let calls = 0;
    const send = async () => {
      calls++;
      await sleep(30);
      if (calls === 1) throw new Error('transient');
      return { id: `ntf_${calls}` };
    };
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 2000, pollMs: 5 };
    const [a, b] = await Promise.allSettled([runIdempotent(opts, send), runIdempotent(opts, send)]);
    expect(a.status).toBe('rejected');
    expect(b).toEqual({ status: 'fulfilled', value: { result: { id: 'ntf_2' }, replayed: false } });
    expect(calls).toBe(2);
  });
});

/** A clock the test moves, and a logger whose lines the test reads. */
function harness(start = 1_000_000) {
  const h = {
    t: start,
    now: () => h.t,
    lines: [] as { level: string; msg: string }[],
  };
  const log = createLogger('debug', (line) => h.lines.push(JSON.parse(line) as { level: string; msg: string }));
  return { h, log };
}

/** Resolves once `ready()` returns true, polling on the event loop (no wall-clock waits). */
async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; !ready(); i++) {
    if (i > 10_000) throw new Error('never became ready');
    await new Promise((r) => setImmediate(r));
  }
}

describe('runIdempotent fencing (owner token and phase)', () => {
  it('after a crash mid-send, the takeover answers DELIVERY_UNKNOWN and sends nothing; so does every later duplicate', async () => {
    const { h, log } = harness();
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 1000, now: h.now, log, via: 'sms' };
    // The owner reaches the provider, then its process dies: the call never returns.
    let atProvider = false;
    void runIdempotent(opts, () => {
      atProvider = true;
      return new Promise<never>(() => {});
    });
    await until(() => atProvider);
    h.t += 1000; // its budget has passed: the claim counts as abandoned
    const send = counter({ id: 'ntf_2' });
    const err = await codeOf(runIdempotent(opts, send));
    expect(err.code).toBe('DELIVERY_UNKNOWN');
    expect(err.details.via).toBe('sms');
    expect(err.message).toMatch(/may or may not have been sent\. This call sent nothing/);
    expect(send.calls).toBe(0);
    expect(h.lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: expect.stringMatching(/abandoned idempotency claim/) }));
    // Stored: later duplicates, however late within the ttl, get the same answer.
    for (const later of [1, 5_000, 3_600_000]) {
      h.t += later;
      const again = await codeOf(runIdempotent(opts, send));
      expect(again.code).toBe('DELIVERY_UNKNOWN');
      expect(again.message).toMatch(/Replayed for idempotency_key "k": this call sent nothing/);
    }
    expect(send.calls).toBe(0);
  });

  it('an owner whose slow preparation outlives its budget does not send; the takeover sends once', async () => {
    const { h, log } = harness();
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 1000, now: h.now, log };
    let sends = 0;
    let finishPreparing!: () => void;
    const slowOwner = runIdempotent(opts, {
      prepare: () => new Promise<string>((r) => (finishPreparing = () => r('payload-a'))),
      send: async (p: string) => `sent ${p} #${++sends}`,
    });
    await until(() => finishPreparing !== undefined);
    h.t += 1000; // building the payload took the whole budget
    const taker = await runIdempotent(opts, { prepare: async () => 'payload-b', send: async (p: string) => `sent ${p} #${++sends}` });
    expect(taker).toEqual({ result: 'sent payload-b #1', replayed: false });
    finishPreparing();
    const err = await codeOf(slowOwner);
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
    expect(err.message).toMatch(/budget was spent before the provider was called.*nothing was sent/);
    expect(sends).toBe(1);
    // The lost owner's release did not drop the taker's result.
    expect(await runIdempotent(opts, async () => 'never')).toEqual({ result: 'sent payload-b #1', replayed: true });
  });

  it('an owner fenced out before its provider call (its claim taken over) sends nothing and says so', async () => {
    // Two clocks that disagree: the taker's runs 1 s ahead, so it takes over a claim whose
    // owner still thinks it is within budget. Only the fence stops the owner.
    const { h, log } = harness();
    const ownerOpts = { store, key: 'k', payloadHash: 'h', budgetMs: 1000, now: h.now, log };
    let sends = 0;
    let finishPreparing!: () => void;
    const owner = runIdempotent(ownerOpts, {
      prepare: () => new Promise<void>((r) => (finishPreparing = r)),
      send: async () => `owner #${++sends}`,
    });
    await until(() => finishPreparing !== undefined);
    const taker = await runIdempotent({ ...ownerOpts, now: () => h.t + 1000 }, async () => `taker #${++sends}`);
    expect(taker.result).toBe('taker #1');
    finishPreparing();
    const err = await codeOf(owner);
    expect(err.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(err.message).toMatch(/took the key over; this call sent nothing/);
    expect(err.details.retryAfterS).toBe(1);
    expect(sends).toBe(1);
    expect(h.lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: expect.stringMatching(/no longer owns the claim/) }));
  });

  it("an owner that lost its claim mid-send keeps its own answer but never overwrites the new owner's row", async () => {
    const { h, log } = harness();
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 1000, now: h.now, log };
    let finish!: (r: { id: string }) => void;
    const slow = runIdempotent(opts, () => new Promise<{ id: string }>((r) => (finish = r)));
    await until(() => finish !== undefined);
    h.t += 1000;
    const taker = counter({ id: 'ntf_2' });
    expect((await codeOf(runIdempotent(opts, taker))).code).toBe('DELIVERY_UNKNOWN');
    // The provider answered after all: that caller hears the truth (it was sent)…
    finish({ id: 'ntf_1' });
    expect(await slow).toEqual({ result: { id: 'ntf_1' }, replayed: false });
    expect(h.lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: expect.stringMatching(/taken over during the send/) }));
    // …but the key keeps the answer its new owner stored, and nothing was sent twice.
    expect((await codeOf(runIdempotent(opts, taker))).code).toBe('DELIVERY_UNKNOWN');
    expect(taker.calls).toBe(0);
  });

  it("a lost owner whose send failed does not release the new owner's claim", async () => {
    const { h, log } = harness();
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 1000, now: h.now, log };
    let fail!: () => void;
    const slow = runIdempotent(
      opts,
      () => new Promise<never>((_, reject) => (fail = () => reject(new NotifyError('PROVIDER_REJECTED', 'no')))),
    );
    await until(() => fail !== undefined);
    h.t += 1000;
    expect((await codeOf(runIdempotent(opts, counter({ id: 'x' })))).code).toBe('DELIVERY_UNKNOWN');
    fail();
    expect((await codeOf(slow)).code).toBe('PROVIDER_REJECTED');
    // Not released: a retry still gets the stored answer instead of sending.
    const retry = counter({ id: 'ntf_retry' });
    expect((await codeOf(runIdempotent(opts, retry))).code).toBe('DELIVERY_UNKNOWN');
    expect(retry.calls).toBe(0);
  });

  it('writes phase sending before the provider call starts, and only after preparing', async () => {
    const { h } = harness();
    const phases: string[] = [];
    const phase = async () => {
      const c = await store.claimIdempotency('k', 'h', h.t, { ttlMs: 86_400_000, staleAfterMs: Number.MAX_SAFE_INTEGER });
      return c.kind === 'existing' && c.state === 'pending' ? c.phase : c.kind;
    };
    await runIdempotent(
      { store, key: 'k', payloadHash: 'h', budgetMs: 1000, now: h.now },
      {
        prepare: async () => void phases.push(`prepare: ${await phase()}`),
        send: async (_p: void, left: number) => {
          phases.push(`send: ${await phase()}, ${left} ms left`);
          return 'ok';
        },
      },
    );
    expect(phases).toEqual(['prepare: claimed', 'send: sending, 1000 ms left']);
  });

  it('gives the send only the budget preparation left, counted from startedAt', async () => {
    const { h } = harness();
    let left = -1;
    await runIdempotent(
      { store, key: 'k', payloadHash: 'h', budgetMs: 1000, startedAt: h.t - 100, now: h.now },
      {
        prepare: async () => void (h.t += 250),
        send: async (_p: void, budgetLeftMs: number) => void (left = budgetLeftMs),
      },
    );
    expect(left).toBe(650);
  });

  it('a claim that fails before the provider call is released for a retry', async () => {
    const { h } = harness();
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 1000, now: h.now };
    const boom = new NotifyError('RATE_LIMITED', 'slow down', { retryAfterS: 2 });
    const never = counter('x');
    await expect(runIdempotent(opts, { prepare: async () => Promise.reject(boom), send: never })).rejects.toBe(boom);
    expect(never.calls).toBe(0);
    expect(await runIdempotent(opts, async () => 'sent')).toEqual({ result: 'sent', replayed: false });
  });
});

describe('runIdempotent with a send that is only its record (recordCompleting)', () => {
  const steps = (write: (claim: { key: string; owner: string }) => Promise<{ id: string } | undefined>) => {
    const calls = { send: 0, record: 0 };
    return {
      calls,
      steps: {
        prepare: async () => 'prepared',
        send: async () => {
          calls.send++;
          return { id: 'via send' };
        },
        recordCompleting: async (_: string, claim: { key: string; owner: string }) => {
          calls.record++;
          return write(claim);
        },
      },
    };
  };

  it('writes the record with the completion: no sending phase, no separate send, replayed after', async () => {
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 1000 };
    const marks: string[] = [];
    const mark = store.markIdempotencySending.bind(store);
    store.markIdempotencySending = async (key, owner) => (marks.push(key), mark(key, owner));
    const s = steps(async (claim) =>
      (await store.completeIdempotency(claim.key, claim.owner, { id: 'ntf_1' })) ? { id: 'ntf_1' } : undefined,
    );
    expect(await runIdempotent(opts, s.steps)).toEqual({ result: { id: 'ntf_1' }, replayed: false });
    expect(await runIdempotent(opts, s.steps)).toEqual({ result: { id: 'ntf_1' }, replayed: true });
    expect(s.calls).toEqual({ send: 0, record: 1 });
    expect(marks).toEqual([]);
  });

  it('answers IDEMPOTENCY_IN_PROGRESS when the claim was lost before the record', async () => {
    const s = steps(async () => undefined);
    const err = await codeOf(runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 1000, via: 'email' }, s.steps));
    expect(err.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(err.message).toMatch(/took the key over; this call sent nothing/);
  });

  it('releases the claim when the record fails, so a retry records it', async () => {
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 1000 };
    const failing = steps(async () => {
      throw new Error('disk full');
    });
    await expect(runIdempotent(opts, failing.steps)).rejects.toThrow('disk full');
    const ok = steps(async (claim) =>
      (await store.completeIdempotency(claim.key, claim.owner, { id: 'ntf_2' })) ? { id: 'ntf_2' } : undefined,
    );
    expect(await runIdempotent(opts, ok.steps)).toEqual({ result: { id: 'ntf_2' }, replayed: false });
  });
});
