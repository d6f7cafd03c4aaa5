import { describe, expect, it } from 'vitest';
import { deferredStore } from './deferred.js';
import type { Store } from './types.js';

/** A store whose every method answers its own name; `opened` counts the openings. */
function fakeOpen() {
  const state = { opened: 0, closed: 0 };
  const real = new Proxy({} as Record<string, unknown>, {
    // Not a thenable: `then` is no store method.
    get: (_, key) => (key === 'then' ? undefined : key === 'close' ? async () => void state.closed++ : key === 'kind' ? 'sqlite' : async () => key),
  }) as unknown as Store;
  return { state, real, open: async () => (state.opened++, real) };
}

describe('deferredStore', () => {
  it('opens on first use, once, and then hands out the real methods', async () => {
    const { state, real, open } = fakeOpen();
    const d = deferredStore('sqlite', open);
    expect(d.store.kind).toBe('sqlite');
    expect(state.opened).toBe(0);
    const [a, b] = await Promise.all([d.store.getDelivery('x'), d.store.findOptedOut({ via: 'sms', recipients: ['+1'] })]);
    expect([a, b]).toEqual(['getDelivery', 'findOptedOut']);
    expect(state.opened).toBe(1);
    expect(await d.open()).toBe(real);
    expect(state.opened).toBe(1);
    expect(await d.store.bannersVersion()).toBe('bannersVersion');
  });

  it('open() rejects as opening failed, and so does a call waiting on it', async () => {
    const d = deferredStore('sqlite', async () => {
      throw new Error('no store');
    });
    await expect(d.store.listDeliveries(1)).rejects.toThrow('no store');
    await expect(d.open()).rejects.toThrow('no store');
    await expect(d.store.close()).resolves.toBeUndefined();
  });

  it('close() opens nothing that was never opened, and closes what was', async () => {
    const first = fakeOpen();
    await deferredStore('sqlite', first.open).store.close();
    expect(first.state).toEqual({ opened: 0, closed: 0 });
    const second = fakeOpen();
    const d = deferredStore('sqlite', second.open);
    void d.open();
    await d.store.close();
    expect(second.state).toEqual({ opened: 1, closed: 1 });
  });
});
