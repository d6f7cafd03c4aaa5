import { describe, expect, it } from 'vitest';
import { NotifyError } from '../errors.js';
import { createRateGate } from './rate-limit.js';

const H = 3_600_000;

function refusal(fn: () => void): NotifyError {
  try {
    fn();
  } catch (err) {
    if (err instanceof NotifyError) return err;
    throw err;
  }
  throw new Error('expected RATE_LIMITED');
}

describe('createRateGate', () => {
  it('is absent when no limits are configured', () => {
    expect(createRateGate([])).toBeUndefined();
  });

  it('admits up to the limit per client and channel, then answers RATE_LIMITED with retry_after_s', () => {
    const gate = createRateGate([{ via: 'sms', limit: 2, windowMs: H }])!;
    const t0 = 1_000_000;
    gate.check('bot-a', 'sms', t0);
    gate.check('bot-a', 'sms', t0 + 10_000);
    const err = refusal(() => gate.check('bot-a', 'sms', t0 + 20_000));
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.toBody()).toMatchObject({ code: 'RATE_LIMITED', via: 'sms', retry_after_s: 3580 });
    expect(err.message).toContain('2 per hour');
    // Another client and another channel have their own budgets.
    gate.check('bot-b', 'sms', t0 + 20_000);
    gate.check('bot-a', 'email', t0 + 20_000);
  });

  it('slides: the oldest admission leaving the window frees one slot', () => {
    const gate = createRateGate([{ via: 'email', limit: 2, windowMs: 60_000 }])!;
    gate.check('c', 'email', 0);
    gate.check('c', 'email', 30_000);
    expect(refusal(() => gate.check('c', 'email', 59_999)).details.retryAfterS).toBe(1);
    gate.check('c', 'email', 60_000);
    expect(refusal(() => gate.check('c', 'email', 60_001)).details.retryAfterS).toBe(30);
    gate.check('c', 'email', 90_000);
  });

  it('does not count refused calls', () => {
    const gate = createRateGate([{ via: 'sms', limit: 1, windowMs: 10_000 }])!;
    gate.check('c', 'sms', 0);
    for (let t = 1; t < 10; t++) refusal(() => gate.check('c', 'sms', t * 1000));
    gate.check('c', 'sms', 10_000);
  });

  it('applies * as a cap over all channels together, and reports the longer wait', () => {
    const gate = createRateGate([
      { via: '*', limit: 3, windowMs: H },
      { via: 'sms', limit: 1, windowMs: 60_000 },
    ])!;
    gate.check('c', 'sms', 0);
    expect(refusal(() => gate.check('c', 'sms', 1000)).details.retryAfterS).toBe(59);
    gate.check('c', 'email', 1000);
    gate.check('c', 'slack', 2000);
    const err = refusal(() => gate.check('c', 'email', 3000));
    expect(err.details.retryAfterS).toBe(3597);
    expect(err.message).toContain('all channels');
    // A null client (no token, no clientInfo) is one shared bucket, not unlimited.
    gate.check(null, 'sms', 0);
    refusal(() => gate.check(null, 'sms', 1));
  });

  it('forgets idle clients', () => {
    const gate = createRateGate([{ via: 'sms', limit: 5, windowMs: 1000 }])!;
    for (let i = 0; i < 100; i++) gate.check(`client-${i}`, 'sms', 0);
    expect(gate.size()).toBe(100);
    gate.check('late', 'sms', 120_000);
    expect(gate.size()).toBe(1);
  });
});
