import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotifyError } from '../core/errors.js';
import { silentLogger } from '../core/log.js';
import { openSqliteStore, type SqliteStore } from '../store/sqlite/store.js';
import { createRateGate, type RateLimit } from './rate-limit.js';

const H = 3_600_000;

let dir: string;
let store: SqliteStore;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'notify-rate-unit-'));
  store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const gateFor = (limits: RateLimit[]) => createRateGate(limits, store)!;

async function refusal(p: Promise<void>): Promise<NotifyError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof NotifyError) return err;
  throw err ?? new Error('expected RATE_LIMITED');
}

describe('createRateGate', () => {
  it('is absent when no limits are configured', () => {
    expect(createRateGate([], store)).toBeUndefined();
  });

  it('admits up to the limit per client and channel, then answers RATE_LIMITED with retry_after_s', async () => {
    const gate = gateFor([{ via: 'sms', limit: 2, windowMs: H }]);
    const t0 = 1_000_000;
    await gate.check('bot-a', 'sms', t0);
    await gate.check('bot-a', 'sms', t0 + 10_000);
    const err = await refusal(gate.check('bot-a', 'sms', t0 + 20_000));
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.toBody()).toMatchObject({ code: 'RATE_LIMITED', via: 'sms', retry_after_s: 3580 });
    expect(err.message).toContain('2 per hour');
    // Another client and another channel have their own budgets.
    await gate.check('bot-b', 'sms', t0 + 20_000);
    await gate.check('bot-a', 'email', t0 + 20_000);
  });

  it('slides: the oldest admission leaving the window frees one slot', async () => {
    const gate = gateFor([{ via: 'email', limit: 2, windowMs: 60_000 }]);
    await gate.check('c', 'email', 0);
    await gate.check('c', 'email', 30_000);
    expect((await refusal(gate.check('c', 'email', 59_999))).details.retryAfterS).toBe(1);
    await gate.check('c', 'email', 60_000);
    expect((await refusal(gate.check('c', 'email', 60_001))).details.retryAfterS).toBe(30);
    await gate.check('c', 'email', 90_000);
  });

  it('does not count refused calls', async () => {
    const gate = gateFor([{ via: 'sms', limit: 1, windowMs: 10_000 }]);
    await gate.check('c', 'sms', 0);
    for (let t = 1; t < 10; t++) await refusal(gate.check('c', 'sms', t * 1000));
    await gate.check('c', 'sms', 10_000);
  });

  it('applies * as a cap over all channels together, and reports the longer wait', async () => {
    const gate = gateFor([
      { via: '*', limit: 3, windowMs: H },
      { via: 'sms', limit: 1, windowMs: 60_000 },
    ]);
    await gate.check('c', 'sms', 0);
    expect((await refusal(gate.check('c', 'sms', 1000))).details.retryAfterS).toBe(59);
    await gate.check('c', 'email', 1000);
    await gate.check('c', 'slack', 2000);
    const err = await refusal(gate.check('c', 'email', 3000));
    expect(err.details.retryAfterS).toBe(3597);
    expect(err.message).toContain('all channels');
    // A null client (no token, no clientInfo) is one shared bucket, not unlimited.
    await gate.check(null, 'sms', 0);
    await refusal(gate.check(null, 'sms', 1));
  });

  it('admits into every window or none: a send refused by * is not counted against its channel', async () => {
    const gate = gateFor([
      { via: '*', limit: 1, windowMs: H },
      { via: 'sms', limit: 2, windowMs: H },
    ]);
    await gate.check('c', 'email', 0);
    await refusal(gate.check('c', 'sms', 1));
    await refusal(gate.check('c', 'sms', 2));
    // The refusals left the sms window empty: it still has room for one.
    expect(await store.admitRate([{ key: JSON.stringify(['c', 'sms', H]), limit: 1, windowMs: H }], 3)).toEqual({ admitted: true });
  });

  it('counts a channel listed twice with one window once, at the stricter limit', async () => {
    const gate = gateFor([
      { via: 'sms', limit: 3, windowMs: H },
      { via: 'sms', limit: 2, windowMs: H },
    ]);
    await gate.check('c', 'sms', 0);
    await gate.check('c', 'sms', 1);
    await refusal(gate.check('c', 'sms', 2));
  });

  // Two connections in one process; two real processes are test/store/rate-limit-multiprocess.test.ts.
  it("is shared by two gates on two connections to one store file: the count is the store's, not a gate's", async () => {
    const other = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
    try {
      const limits = [{ via: 'sms', limit: 3, windowMs: H }];
      const [a, b] = [createRateGate(limits, store)!, createRateGate(limits, other)!];
      await a.check('c', 'sms', 0);
      await b.check('c', 'sms', 1);
      await a.check('c', 'sms', 2);
      await refusal(b.check('c', 'sms', 3));
      await refusal(a.check('c', 'sms', 4));
    } finally {
      await other.close();
    }
  });
});
