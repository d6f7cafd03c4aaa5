/** The contacts port: opt-outs and approved first contacts. Part of the Store contract (../suite.ts), run on both engines. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/types.js';
import { delivery, OPTS, T0, type StoreHandle } from './fixtures.js';

export function contactsContract(open: () => StoreHandle): void {
  let h: StoreHandle;
  let store: Store;
  beforeEach(() => {
    h = open();
    store = h.store;
  });

  describe('opt-outs', () => {
    it('remembers a recipient per channel; adding twice is harmless', async () => {
      expect(await store.findOptedOut({ via: 'sms', recipients: ['+15551234567'] })).toBeUndefined();
      await store.addOptOut('sms', '+15551234567', T0);
      await store.addOptOut('sms', '+15551234567', T0 + 1);
      expect(await store.findOptedOut({ via: 'sms', recipients: ['+15551234567'] })).toBe('+15551234567');
      expect(await store.findOptedOut({ via: 'sms', recipients: ['+15551234568'] })).toBeUndefined();
      expect(await store.findOptedOut({ via: 'email', recipients: ['+15551234567'] })).toBeUndefined();
    });

    it('a claim that checks opt-outs claims nothing for an opted-out recipient, and claims as usual otherwise', async () => {
      await store.addOptOut('sms', '+15551234567', T0);
      const optOut = (...recipients: string[]) => ({ ...OPTS, optOut: { via: 'sms', recipients } });
      expect(await store.claimIdempotency('oo', 'h', T0, optOut('+15550000000', '+15551234567'))).toEqual({
        kind: 'opted_out',
        recipient: '+15551234567',
      });
      // Nothing was claimed: the same key is free for a send that may go out.
      expect(await store.claimIdempotency('oo', 'h', T0, optOut('+15550000000'))).toMatchObject({ kind: 'claimed', phase: 'claimed' });
      // Checked before the key: even a finished send under the key answers opted out.
      expect(await store.claimIdempotency('oo', 'h', T0 + 1, optOut('+15551234567'))).toEqual({
        kind: 'opted_out',
        recipient: '+15551234567',
      });
      expect(
        await store.claimIdempotency('oo', 'h', T0 + 1, { ...OPTS, optOut: { via: 'email', recipients: ['+15551234567'] } }),
      ).toMatchObject({
        kind: 'existing',
        state: 'pending',
      });
    });

    it('records a delivery unless a recipient opted out, and then records nothing and names that recipient', async () => {
      await store.addOptOut('sms', '+15551234567', T0);
      const check = (...recipients: string[]) => ({ via: 'sms', recipients });
      expect(await store.writeRecord(delivery('ntf_oo1', T0), { optOut: check('+15550000000', '+15551234567') })).toEqual({
        kind: 'opted_out',
        recipient: '+15551234567',
      });
      expect(await store.getDelivery('ntf_oo1')).toBeNull();
      expect(await store.writeRecord(delivery('ntf_oo2', T0), { optOut: check('+15550000000') })).toEqual({ kind: 'written' });
      expect(await store.getDelivery('ntf_oo2')).toMatchObject({ id: 'ntf_oo2' });
      // Per channel, as opt-outs are.
      expect(await store.writeRecord(delivery('ntf_oo3', T0), { optOut: { via: 'email', recipients: ['+15551234567'] } })).toEqual({
        kind: 'written',
      });
      expect(await store.getDelivery('ntf_oo3')).toMatchObject({ id: 'ntf_oo3' });
    });
  });

  describe('contacts', () => {
    it('remembers approved first contacts per channel, keeps the first approval, lists and forgets them, shared by stores', async () => {
      expect(await store.knownContacts('sms', ['+15551234567'])).toEqual(new Set());
      await store.addContacts('sms', ['+15551234567', '+15551234568'], T0, 'bot');
      await store.addContacts('sms', ['+15551234567'], T0 + 1, 'other');
      expect(await store.knownContacts('sms', ['+15551234567', '+15551234569'])).toEqual(new Set(['+15551234567']));
      expect(await store.knownContacts('email', ['+15551234567'])).toEqual(new Set());
      const other = await h.reopen();
      expect(await other.listContacts()).toEqual([
        { via: 'sms', recipient: '+15551234567', approved_at: T0, client: 'bot' },
        { via: 'sms', recipient: '+15551234568', approved_at: T0, client: 'bot' },
      ]);
      expect(await other.forgetContact('sms', '+15551234567')).toBe(true);
      expect(await other.forgetContact('sms', '+15551234567')).toBe(false);
      expect(await store.knownContacts('sms', ['+15551234567', '+15551234568'])).toEqual(new Set(['+15551234568']));
    });
  });
}
