import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotifyError } from '../errors.js';
import { silentLogger } from '../log.js';
import { openSqliteStore, type SqliteStore } from '../store/sqlite.js';
import { runIdempotent } from './idempotency.js';

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
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const send = async () => {
      calls++;
      await gate;
      return { id: 'ntf_1' };
    };
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 10_000, pollMs: 10 };
    const first = runIdempotent(opts, send);
    await sleep(5); // let the first claim
    let dupDone = false;
    const dup = runIdempotent(opts, send).finally(() => (dupDone = true));
    await sleep(100);
    expect(dupDone).toBe(false); // still waiting: the first has not finished
    release();
    expect(await dup).toEqual({ result: { id: 'ntf_1' }, replayed: true });
    expect(await first).toEqual({ result: { id: 'ntf_1' }, replayed: false });
    expect(calls).toBe(1);
  });

  it('answers IDEMPOTENCY_IN_PROGRESS with retry_after_s when the first is still unresolved after the budget', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const send = async () => {
      calls++;
      await gate;
      return { id: 'ntf_1' };
    };
    const first = runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 30_000 }, send);
    await sleep(5);
    const started = Date.now();
    const err = await codeOf(runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 100, pollMs: 10 }, send));
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(err.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(err.details.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(err.toBody()).toMatchObject({ code: 'IDEMPOTENCY_IN_PROGRESS', retry_after_s: err.details.retryAfterS });
    // Once the first finishes, the retry replays.
    release();
    await first;
    expect((await runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 100 }, send)).replayed).toBe(true);
    expect(calls).toBe(1);
  });

  it('takes over a claim abandoned by a dead owner once its budget has passed', async () => {
    const T = 1_000_000;
    // A process claimed the key and died before completing.
    expect(await store.claimIdempotency('k', 'h', T, { ttlMs: 86_400_000, staleAfterMs: 1000 })).toEqual({ kind: 'claimed' });
    const send = counter({ id: 'ntf_2' });
    // Arrives half-way through the dead owner's budget; its clock moves 100 ms per reading.
    let t = T + 400;
    const ticking = () => (t += 100);
    const early = await codeOf(runIdempotent({ store, key: 'k', payloadHash: 'h', budgetMs: 1000, now: ticking, pollMs: 1 }, send));
    expect(early.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(early.details.retryAfterS).toBe(1);
    expect(send.calls).toBe(0);
    // Just before the budget has passed: still in progress; at it: taken over.
    const readings = (...values: number[]) => () => (values.length > 1 ? values.shift()! : values[0]!);
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

  it('keeps DELIVERY_UNKNOWN under the key and replays it to duplicates instead of sending again', async () => {
    const unknown = new NotifyError('DELIVERY_UNKNOWN', 'the provider may have sent it', { via: 'sms' });
    const failing = counter({ id: 'x' }, 20, unknown);
    const opts = { store, key: 'k', payloadHash: 'h', budgetMs: 1000, pollMs: 5 };
    const [first, waiting] = await Promise.allSettled([runIdempotent(opts, failing), runIdempotent(opts, failing)]);
    expect(first).toEqual({ status: 'rejected', reason: unknown });
    expect(waiting.status).toBe('rejected');
    const replayed = (waiting as PromiseRejectedResult).reason as NotifyError;
    expect(replayed).toBeInstanceOf(NotifyError);
    expect(replayed.toBody()).toEqual({ code: 'DELIVERY_UNKNOWN', message: 'the provider may have sent it', via: 'sms' });
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
    const stores = [store, ...(await Promise.all([1, 2, 3].map(() => openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger }))))];
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
