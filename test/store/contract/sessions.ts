/** The sessions port: console sessions signed out. Part of the Store contract (../suite.ts), run on both engines. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/types.js';
import { HOUR, T0, type StoreHandle } from './fixtures.js';

export function sessionsContract(open: () => StoreHandle): void {
  let h: StoreHandle;
  let store: Store;
  beforeEach(() => {
    h = open();
    store = h.store;
  });

  describe('console sessions signed out', () => {
    it('a session revoked on one store is revoked on another of the same data, until its end; others stay', async () => {
      const other = await h.reopen();
      expect(await other.sessionRevoked('phone')).toBe(false);
      await store.revokeSession('phone', T0 + HOUR, T0);
      await store.revokeSession('phone', T0 + HOUR, T0);
      expect(await other.sessionRevoked('phone')).toBe(true);
      expect(await other.sessionRevoked('desk')).toBe(false);
      // A later sign-out drops the revocations whose cookies have ended anyway.
      await other.revokeSession('desk', T0 + 3 * HOUR, T0 + HOUR);
      expect(await store.sessionRevoked('phone')).toBe(false);
      expect(await store.sessionRevoked('desk')).toBe(true);
    });
  });
}
