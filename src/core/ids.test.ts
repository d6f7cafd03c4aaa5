import { describe, expect, it } from 'vitest';
import { newBannerId, newNotificationId } from './ids.js';

describe('newNotificationId', () => {
  it('is ntf_ and 32 hex digits, ordered by time first, with random bits after', async () => {
    const before = Date.now();
    const first = newNotificationId();
    await new Promise((r) => setTimeout(r, 2));
    const ids = Array.from({ length: 1000 }, () => newNotificationId());
    for (const id of [first, ...ids]) expect(id).toMatch(/^ntf_[0-9a-f]{32}$/);
    expect(ids.every((id) => id > first)).toBe(true);
    expect(Number.parseInt(first.slice(4, 16), 16)).toBeGreaterThanOrEqual(before);
    expect(Number.parseInt(first.slice(4, 16), 16)).toBeLessThanOrEqual(Date.now());
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('newBannerId', () => {
  it('is bnr_ and a random UUID, a new one each time', () => {
    const ids = Array.from({ length: 100 }, () => newBannerId());
    for (const id of ids) expect(id).toMatch(/^bnr_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
