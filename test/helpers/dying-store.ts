/** A store as a process sees it that dies right after its last write: its own release never claims anything. */
import type { Store } from '../../src/store/types.js';

export function diesBeforeRelease(store: Store): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'claimDue') return async () => Promise.reject(new Error('process died'));
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
