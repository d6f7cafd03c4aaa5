/** The deliveries port: records written and read, listings, the console's filters and decisions on held sends. Part of the Store contract (../suite.ts), run on both engines. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryQuery, Store } from '../../../src/store/types.js';
import { entry } from './outbox.js';
import { delivery, HOUR, T0, type StoreHandle } from './fixtures.js';

export function deliveriesContract(open: () => StoreHandle): void {
  let h: StoreHandle;
  let store: Store;
  beforeEach(() => {
    h = open();
    store = h.store;
  });

  describe('deliveries', () => {
    it('lists newest first, ties in insertion order reversed, and round-trips every field', async () => {
      await store.writeRecord(delivery('ntf_a', T0));
      await store.writeRecord(
        delivery('ntf_b', T0 + 1, { status: 'sent', provider_message_id: 'SM1', client: 'bot', idempotency_key: 'k' }),
      );
      await store.writeRecord(delivery('ntf_c', T0));
      const log = [
        { attempt: 1, outcome: 'rate_limited', vendor_code: 429, latency_ms: 12 },
        { attempt: 2, outcome: 'transient', vendor_code: 'ECONNRESET', latency_ms: 5 },
        { attempt: 3, outcome: 'rejected', vendor_code: 21211, latency_ms: 40 },
      ];
      await store.writeRecord(
        delivery('ntf_d', T0 - 5, { status: 'failed', error_code: 'PROVIDER_REJECTED', attempts: 3, attempt_log: log }),
      );
      const all = await store.listDeliveries(10);
      expect(all.map((d) => d.id)).toEqual(['ntf_b', 'ntf_c', 'ntf_a', 'ntf_d']);
      expect(all[0]).toEqual(
        delivery('ntf_b', T0 + 1, { status: 'sent', provider_message_id: 'SM1', client: 'bot', idempotency_key: 'k' }),
      );
      expect(await store.getDelivery('ntf_b')).toEqual(all[0]);
      expect(all[3]).toMatchObject({ status: 'failed', error_code: 'PROVIDER_REJECTED', attempts: 3, attempt_log: log });
      expect((await store.listDeliveries(2)).map((d) => d.id)).toEqual(['ntf_b', 'ntf_c']);
    });

    it('round-trips what a person was asked and answered', async () => {
      const approval = { outcome: 'declined' as const, reasons: ['first-contact', 'sms'], payload_sha256: 'ab'.repeat(32) };
      await store.writeRecord(delivery('ntf_ap', T0, { status: 'failed', error_code: 'APPROVAL_DECLINED', approval }));
      expect((await store.listDeliveries(1))[0]).toEqual(
        delivery('ntf_ap', T0, { status: 'failed', error_code: 'APPROVAL_DECLINED', approval }),
      );
    });

    it('rejects a duplicate delivery id', async () => {
      await store.writeRecord(delivery('ntf_dup', T0));
      await expect(store.writeRecord(delivery('ntf_dup', T0))).rejects.toThrow();
    });

    it('finds a delivery by id and by its channel and provider message id; nothing for unknown ones', async () => {
      await store.writeRecord(
        delivery('ntf_sms', T0, {
          via: 'sms',
          status: 'sent',
          provider: 'twilio',
          provider_message_id: 'SM9',
          provider_status: 'queued',
        }),
      );
      await store.writeRecord(delivery('ntf_mail', T0, { status: 'sent', provider: 'smtp', provider_message_id: 'SM9' }));
      expect(await store.getDelivery('ntf_sms')).toMatchObject({ id: 'ntf_sms', provider_status: 'queued', provider_status_code: null });
      expect(await store.getDelivery('ntf_nope')).toBeNull();
      expect((await store.findDeliveryByProviderMessage('sms', 'SM9'))?.id).toBe('ntf_sms');
      expect((await store.findDeliveryByProviderMessage('email', 'SM9'))?.id).toBe('ntf_mail');
      expect(await store.findDeliveryByProviderMessage('sms', 'SM0')).toBeNull();
    });

    it('updates a status only from the state the caller read (compare-and-set), across processes', async () => {
      await store.writeRecord(delivery('ntf_s', T0, { via: 'sms', status: 'sent', provider: 'twilio', provider_message_id: 'SM7' }));
      const other = await h.reopen();
      try {
        const change = { from: 'sent' as const, provider_status: 'delivered', provider_status_code: null, at: T0 + 9 };
        const results = await Promise.all([
          store.updateDeliveryStatus('ntf_s', { ...change, status: 'delivered' }),
          other.updateDeliveryStatus('ntf_s', {
            ...change,
            status: 'undelivered',
            provider_status: 'undelivered',
            provider_status_code: '30003',
          }),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
        const after = (await other.getDelivery('ntf_s'))!;
        expect(after.status_updated_at).toBe(T0 + 9);
        expect([after.status, after.provider_status, after.provider_status_code]).toEqual(
          results[0] ? ['delivered', 'delivered', null] : ['undelivered', 'undelivered', '30003'],
        );
        // From a state it is no longer in: nothing is written.
        expect(await store.updateDeliveryStatus('ntf_s', { ...change, status: 'sent', provider_status: 'sent' })).toBe(false);
        expect((await store.getDelivery('ntf_s'))!.status).toBe(after.status);
        expect(await store.updateDeliveryStatus('ntf_nope', { ...change, status: 'delivered' })).toBe(false);
      } finally {
        await other.close();
      }
    });
  });

  describe('console: filtered listing and decisions on held sends', () => {
    it('filters by status, channel, client and time, each alone and together, newest first', async () => {
      await store.writeRecord(delivery('ntf_1', T0, { client: 'bot', status: 'sent' }));
      await store.writeRecord(delivery('ntf_2', T0 + HOUR, { client: 'ops', via: 'sms' }));
      await store.writeRecord(delivery('ntf_3', T0 + 2 * HOUR, { client: 'bot', via: 'sms', status: 'sent' }));
      await store.writeRecord(delivery('ntf_4', T0 + 3 * HOUR, { client: null }));
      const ids = async (q: Partial<Parameters<Store['findDeliveries']>[0]>) =>
        (await store.findDeliveries({ limit: 10, ...q })).map((d) => d.id);
      expect(await ids({})).toEqual(['ntf_4', 'ntf_3', 'ntf_2', 'ntf_1']);
      expect(await ids({ status: 'sent' })).toEqual(['ntf_3', 'ntf_1']);
      expect(await ids({ via: 'sms' })).toEqual(['ntf_3', 'ntf_2']);
      expect(await ids({ client: 'bot' })).toEqual(['ntf_3', 'ntf_1']);
      expect(await ids({ since: T0 + HOUR, until: T0 + 3 * HOUR })).toEqual(['ntf_3', 'ntf_2']);
      expect(await ids({ client: 'bot', via: 'sms', status: 'sent', since: T0 + 2 * HOUR })).toEqual(['ntf_3']);
      expect(await ids({ client: 'nobody' })).toEqual([]);
      expect(await ids({ limit: 1 })).toEqual(['ntf_4']);
    });

    it('lists the outbox entries that have no delivery record (scheduled, held, cancelled), filtered and paged, newest first', async () => {
      await store.scheduleSend(entry({ id: 'ntf_ob_sched', created_at: T0, client: 'bot' }));
      await store.scheduleSend(entry({ id: 'ntf_ob_held', created_at: T0 + HOUR, state: 'held', via: 'sms', client: 'ops' }));
      await store.scheduleSend(entry({ id: 'ntf_ob_gone', created_at: T0 + HOUR, client: 'bot' }));
      expect(await store.moveWaiting('ntf_ob_gone', ['scheduled'], 'cancelled', T0 + 2 * HOUR)).toMatchObject({ moved: true });
      // Recorded: an approved send waiting for its release has its delivery row, and is listed there.
      await store.scheduleSend(entry({ id: 'ntf_ob_recorded', created_at: T0 + 3 * HOUR }));
      await store.writeRecord(delivery('ntf_ob_recorded', T0 + 3 * HOUR, { status: 'approved' }));
      const ids = async (q: Partial<Parameters<Store['findUnrecordedOutbox']>[0]> = {}) =>
        (await store.findUnrecordedOutbox({ limit: 10, ...q })).map((e) => e.id);
      // Newest first; at one time, by id, descending.
      expect(await ids()).toEqual(['ntf_ob_held', 'ntf_ob_gone', 'ntf_ob_sched']);
      expect(await ids({ state: 'cancelled' })).toEqual(['ntf_ob_gone']);
      expect(await ids({ state: 'scheduled' })).toEqual(['ntf_ob_sched']);
      expect(await ids({ via: 'sms' })).toEqual(['ntf_ob_held']);
      expect(await ids({ client: 'bot', since: T0 + 1, until: T0 + 2 * HOUR })).toEqual(['ntf_ob_gone']);
      // Pages: before a time (every entry at it), or before an entry at its time.
      expect(await ids({ before: { at: T0 + HOUR + 1, id: null } })).toEqual(['ntf_ob_held', 'ntf_ob_gone', 'ntf_ob_sched']);
      expect(await ids({ before: { at: T0 + HOUR, id: 'ntf_ob_held' } })).toEqual(['ntf_ob_gone', 'ntf_ob_sched']);
      expect(await ids({ before: { at: T0 + HOUR, id: null } })).toEqual(['ntf_ob_sched']);
    });

    it('lists a page without the MIME or the held call, the MIME apart and cut, for what a listing shows', async () => {
      const raw = `Subject: big\r\nTo: a@example.com\r\n\r\n${'x'.repeat(100_000)}`;
      const call = { via: 'email', to: 'a@example.com', attachments: [{ filename: 'a.txt', content_base64: 'eA=='.repeat(1000) }] };
      const approval = {
        outcome: 'pending' as const,
        reasons: ['all'],
        payload_sha256: 'ab'.repeat(32),
        recipients: ['a@example.com'],
        call,
      };
      await store.writeRecord(
        delivery('ntf_big', T0, {
          status: 'pending_approval',
          client: 'bot',
          payload: { envelope: { from: 'f@x', to: ['a@example.com'] }, messageId: '<m>', raw, bcc: ['b@x'] },
          approval,
        }),
      );
      await store.writeRecord(
        delivery('ntf_slack', T0 + 1, {
          via: 'slack',
          status: 'sent',
          payload: { channel: 'C1', text: 'hi', blocks: [{ type: 'divider' }] },
        }),
      );
      await store.writeRecord(delivery('ntf_plain', T0 + 2, { status: 'sent', approval: null }));
      const whole = async (q: Partial<DeliveryQuery>) =>
        store.findListings({ limit: 10, ...q }, { payloadChars: 2_000_000_000, approval: true });
      const listed = await whole({});
      expect(listed.map((l) => l.record.id)).toEqual(['ntf_plain', 'ntf_slack', 'ntf_big']);
      const big = listed[2]!;
      expect(big).toMatchObject({ head: null, payloadBytes: Buffer.byteLength(JSON.stringify(big.record.payload)) });
      expect(big.record.payload).toEqual({ envelope: { from: 'f@x', to: ['a@example.com'] }, messageId: '<m>', raw, bcc: ['b@x'] });
      const { call: _call, ...light } = approval;
      expect(big.record.approval).toEqual(light);
      expect(listed[1]).toMatchObject({ head: null, record: { payload: { channel: 'C1', text: 'hi', blocks: [{ type: 'divider' }] } } });
      expect(listed[0]!.record.approval).toBeNull();
      // Cut: a payload longer than asked for comes as its first characters only, the approval not at all.
      const cut = await store.findListings({ limit: 10 }, { payloadChars: 100, approval: false });
      expect(cut[2]!).toMatchObject({
        head: JSON.stringify(big.record.payload).slice(0, 100),
        payloadBytes: big.payloadBytes,
        record: { payload: null, approval: null },
      });
      expect(cut[1]!.record.payload).toEqual({ channel: 'C1', text: 'hi', blocks: [{ type: 'divider' }] });
      // The filters and the page are findDeliveries' own.
      expect((await whole({ status: 'pending_approval' })).map((l) => l.record.id)).toEqual(['ntf_big']);
      expect((await whole({ limit: 1, after: 'ntf_plain' })).map((l) => l.record.id)).toEqual(['ntf_slack']);
    });

    it('pages newest first after a given delivery, ties in time included, each row once', async () => {
      // Five at one millisecond, two later: pages of two walk all seven, none twice, none left out.
      for (let i = 1; i <= 5; i++) await store.writeRecord(delivery(`ntf_tie${i}`, T0, { client: 'bot' }));
      await store.writeRecord(delivery('ntf_late1', T0 + 1, { client: 'ops' }));
      await store.writeRecord(delivery('ntf_late2', T0 + 2, { client: 'bot' }));
      const all = (await store.findDeliveries({ limit: 10 })).map((d) => d.id);
      const walked: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = (await store.findDeliveries({ limit: 2, ...(after ? { after } : {}) })).map((d) => d.id);
        if (page.length === 0) break;
        walked.push(...page);
        after = page.at(-1);
      }
      expect(walked).toEqual(all);
      // With a filter, after a row the filter does not admit.
      expect((await store.findDeliveries({ limit: 10, client: 'bot', after: 'ntf_late1' })).map((d) => d.id)).toEqual(
        all.filter((id) => id.startsWith('ntf_tie')),
      );
      expect(await store.findDeliveries({ limit: 10, after: 'ntf_nope' })).toEqual([]);
    });

    it('decides a held send once; a release writes only onto an approved row; expiry takes only pending ones past their time', async () => {
      const pending = { outcome: 'pending' as const, reasons: ['all'], payload_sha256: 'ab'.repeat(32), expires_at: T0 + HOUR };
      await store.writeRecord(delivery('ntf_p', T0, { status: 'pending_approval', approval: pending }));
      await store.writeRecord(delivery('ntf_q', T0 + 10, { status: 'pending_approval', approval: pending }));
      const approved = { ...pending, outcome: 'approved' as const, decided_by: 'ops', decided_at: T0 + 5, reason: 'fine' };
      const other = await h.reopen();
      try {
        // Two deciders racing on two store handles (another replica's view): one wins.
        const [a, b] = await Promise.all([
          store.decideDelivery('ntf_p', { from: 'pending_approval', status: 'approved', approval: approved, at: T0 + 5 }),
          other.decideDelivery('ntf_p', {
            from: 'pending_approval',
            status: 'declined',
            approval: { ...approved, outcome: 'declined' },
            at: T0 + 5,
          }),
        ]);
        expect([a, b].filter(Boolean)).toHaveLength(1);
      } finally {
        await other.close();
      }
      const decided = (await store.getDelivery('ntf_p'))!;
      expect(['approved', 'declined']).toContain(decided.status);
      expect(decided.approval).toMatchObject({
        decided_by: 'ops',
        decided_at: T0 + 5,
        reason: 'fine',
        payload_sha256: pending.payload_sha256,
      });
      expect(decided.status_updated_at).toBe(T0 + 5);

      const release = {
        ...decided,
        status: 'sent' as const,
        provider_message_id: 'm1',
        attempts: 1,
        latency_ms: 7,
        status_updated_at: T0 + 9,
      };
      expect(await store.recordRelease(release)).toBe(decided.status === 'approved');
      expect(await store.recordRelease(release)).toBe(false);
      if (decided.status === 'approved')
        expect(await store.getDelivery('ntf_p')).toMatchObject({
          status: 'sent',
          provider_message_id: 'm1',
          latency_ms: 7,
          approval: approved,
        });

      expect(await store.expirePending(T0 + 5, T0 + 2 * HOUR)).toBe(0);
      expect(await store.expirePending(T0 + 11, T0 + 2 * HOUR)).toBe(1);
      expect(await store.getDelivery('ntf_q')).toMatchObject({ status: 'expired', status_updated_at: T0 + 2 * HOUR });
      expect(await store.expirePending(T0 + 11, T0 + 3 * HOUR)).toBe(0);
    });
  });
}
