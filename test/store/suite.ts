/**
 * The contract every Store implementation passes (src/store/types.ts). Run by
 * test/store/sqlite.test.ts always and test/store/postgres.test.ts when PostgreSQL answers.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BannerRecord, DeliveryQuery, DeliveryRecord, HeldReceipt, Store } from '../../src/store/types.js';
import { FeedCache } from '../../src/banners/feed.js';
import { bannerRecord } from '../helpers/banner-record.js';
import { silentLogger } from '../../src/core/log.js';
import { applyEarlyReceipts, applyReceipt } from '../../src/notification/status-receipt.js';
import { entry, outboxSuite } from './outbox-suite.js';

export interface StoreHandle {
  store: Store;
  /** A second store on the same database (another process's view; migrations re-run). */
  reopen(): Promise<Store>;
  cleanup(): Promise<void>;
}

const T0 = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;
const OPTS = { ttlMs: 24 * HOUR, staleAfterMs: 20_000 };

export function delivery(id: string, created_at: number, extra: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    id,
    via: 'email',
    status: 'dry_run',
    provider: 'dry-run',
    provider_message_id: null,
    payload: { envelope: { from: 'a@x', to: ['b@y'] }, raw: 'Subject: h\u00e9llo \u2603\r\n\r\nbody' },
    error_code: null,
    attempts: 1,
    attempt_log: [{ attempt: 1, outcome: 'sent', latency_ms: 3, at: created_at }],
    latency_ms: 3,
    client: null,
    idempotency_key: null,
    created_at,
    provider_status: null,
    provider_status_code: null,
    status_updated_at: created_at,
    approval: null,
    ...extra,
  };
}

const banner = (extra: Partial<BannerRecord> = {}) => bannerRecord(T0, extra);

export function storeSuite(name: string, open: () => Promise<StoreHandle>): void {
  describe(`Store contract: ${name}`, () => {
    let h: StoreHandle;
    let store: Store;
    beforeEach(async () => {
      h = await open();
      store = h.store;
    });
    afterEach(async () => {
      await h.cleanup();
    });

    outboxSuite(() => h);

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

    describe('held receipts', () => {
      const held = (
        id: string,
        event: HeldReceipt['event'],
        received_at: number,
        via = 'sms',
        notification_id: string | null = null,
      ): HeldReceipt => ({
        via,
        provider_message_id: id,
        notification_id,
        event,
        provider_status: event,
        provider_status_code: event === 'undelivered' ? '30003' : null,
        received_at,
      });
      const bounds = (now: number, maxRows = 100, maxPerMessage = 16) => ({ now, maxAgeMs: HOUR, maxRows, maxPerMessage });
      const sms = (id: string, sid: string | null, status: DeliveryRecord['status'] = 'sent') =>
        delivery(id, T0, { via: 'sms', status, provider: 'twilio', provider_message_id: sid, provider_status: 'queued' });
      /** Takes what is held for `target` (recorded first if it is not), changing nothing; [] when nothing is. */
      const take = async (s: Store, target: DeliveryRecord) => {
        if (!(await s.getDelivery(target.id))) await s.writeRecord(target);
        return (await s.settleHeldReceipts(target, (_d, rows) => ({ change: null, result: [...rows] }))) ?? [];
      };

      it('holds receipts and hands them back once, oldest first, for their channel and message (or notification id) only, to any store', async () => {
        const a = await store.holdReceipt(held('SM1', 'sent', T0), bounds(T0));
        const b = await store.holdReceipt(held('SM1', 'undelivered', T0 + 1), bounds(T0 + 1));
        await store.holdReceipt(held('SM1', 'delivered', T0 + 2, 'email'), bounds(T0 + 2));
        await store.holdReceipt(held('SM2', 'delivered', T0 + 3), bounds(T0 + 3));
        const c = await store.holdReceipt(held('SM9', 'sent', T0 + 4, 'sms', 'ntf_u'), bounds(T0 + 4));
        expect(a).not.toBeNull();
        expect(b).toBeGreaterThan(a!);
        const other = await h.reopen();
        try {
          expect(await take(other, sms('ntf_h1', 'SM1'))).toEqual([
            { seq: a, ...held('SM1', 'sent', T0) },
            { seq: b, ...held('SM1', 'undelivered', T0 + 1) },
          ]);
          expect(await take(store, sms('ntf_h1', 'SM1'))).toEqual([]);
          expect((await take(store, { ...sms('ntf_h2', 'SM1'), via: 'email' })).map((r) => r.event)).toEqual(['delivered']);
          expect((await take(other, sms('ntf_h3', 'SM2'))).map((r) => r.event)).toEqual(['delivered']);
          // A record without the provider's id (its send's answer was lost) takes what names it.
          expect(await take(other, sms('ntf_u', null, 'unknown'))).toEqual([{ seq: c, ...held('SM9', 'sent', T0 + 4, 'sms', 'ntf_u') }]);
        } finally {
          await other.close();
        }
      });

      it("writes the fold's change with the take, in one step, and gives a record without one the provider id", async () => {
        await store.holdReceipt(held('SM4', 'delivered', T0, 'sms', 'ntf_f'), bounds(T0));
        const record = sms('ntf_f', null, 'unknown');
        await store.writeRecord(record);
        const seen = await store.settleHeldReceipts(record, (d, rows) => ({
          change: {
            from: d.status,
            status: 'delivered',
            provider_status: 'delivered',
            provider_status_code: null,
            at: T0 + 7,
            provider_message_id: rows[0]!.provider_message_id,
          },
          result: rows.length,
        }));
        expect(seen).toBe(1);
        expect(await store.getDelivery('ntf_f')).toMatchObject({
          status: 'delivered',
          provider_message_id: 'SM4',
          status_updated_at: T0 + 7,
        });
        expect((await store.findDeliveryByProviderMessage('sms', 'SM4'))?.id).toBe('ntf_f');
        // A fold that throws (a crash between the take and the write) leaves the receipts held.
        await store.holdReceipt(held('SM4', 'failed', T0 + 1, 'sms', 'ntf_f'), bounds(T0 + 1));
        await expect(
          store.settleHeldReceipts(record, () => {
            throw new Error('crash');
          }),
        ).rejects.toThrow('crash');
        expect((await take(store, record)).map((r) => r.event)).toEqual(['failed']);
        // A provider id once set is never replaced.
        expect(
          await store.updateDeliveryStatus('ntf_f', {
            from: 'delivered',
            status: 'delivered',
            provider_status: 'read',
            provider_status_code: null,
            at: T0 + 8,
            provider_message_id: 'SMother',
          }),
        ).toBe(true);
        expect((await store.getDelivery('ntf_f'))!.provider_message_id).toBe('SM4');
      });

      it('refuses a receipt at the cap, counting only receipts younger than the age limit, and purges older ones', async () => {
        expect(await store.holdReceipt(held('SM1', 'sent', T0), bounds(T0, 2))).not.toBeNull();
        expect(await store.holdReceipt(held('SM2', 'sent', T0 + 1), bounds(T0 + 1, 2))).not.toBeNull();
        expect(await store.holdReceipt(held('SM3', 'sent', T0 + 2), bounds(T0 + 2, 2))).toBeNull();
        expect(await take(store, sms('ntf_c3', 'SM3'))).toEqual([]);
        // An hour on, SM1 is past the age limit: purged, so there is room again.
        expect(await store.holdReceipt(held('SM3', 'sent', T0 + HOUR), bounds(T0 + HOUR, 2))).not.toBeNull();
        expect(await take(store, sms('ntf_c1', 'SM1'))).toEqual([]);
        expect((await take(store, sms('ntf_c2', 'SM2'))).length).toBe(1);
        expect((await take(store, sms('ntf_c3', 'SM3'))).length).toBe(1);
      });

      it("one receipt replayed many times is one row, a message holds at most its share, and another message's receipt is still held", async () => {
        const other = await h.reopen();
        try {
          const first = await store.holdReceipt(held('SMx', 'sent', T0), bounds(T0, 5, 3));
          const replays = await Promise.all(
            Array.from({ length: 200 }, (_, i) => (i % 2 ? other : store).holdReceipt(held('SMx', 'sent', T0), bounds(T0 + i, 5, 3))),
          );
          expect(new Set(replays)).toEqual(new Set([first]));
          // Distinct statuses of one message: up to its share (3), then refused.
          expect(await store.holdReceipt(held('SMx', 'delivered', T0 + 1), bounds(T0 + 1, 5, 3))).not.toBeNull();
          expect(await store.holdReceipt(held('SMx', 'failed', T0 + 2), bounds(T0 + 2, 5, 3))).not.toBeNull();
          expect(await store.holdReceipt(held('SMx', 'queued', T0 + 3), bounds(T0 + 3, 5, 3))).toBeNull();
          // The table (5) still has room for another message's genuine receipt.
          expect(await other.holdReceipt(held('SMy', 'delivered', T0 + 4), bounds(T0 + 4, 5, 3))).not.toBeNull();
          expect((await take(store, sms('ntf_x', 'SMx'))).map((r) => r.event)).toEqual(['sent', 'delivered', 'failed']);
          expect((await take(other, sms('ntf_y', 'SMy'))).map((r) => r.event)).toEqual(['delivered']);
        } finally {
          await other.close();
        }
      });

      it("receipts racing their sends' records on two stores (webhook replica, sending replica): none lost, none applied twice", async () => {
        const other = await h.reopen();
        try {
          let applied = 0;
          const count = (outcome: string) => {
            if (outcome === 'applied') applied++;
          };
          const deps = (s: Store) => ({ store: s, log: silentLogger, now: () => T0 + 5 });
          // Microtask turns. PostgreSQL's round trips open the windows between a side's write
          // and its look; a SQLite store in one process answers each call at once, so every
          // fourth pair places the record exactly in the receipt's window (after its first
          // look, before its hold), on both stores: only its second look can then find it.
          const turns = async (n: number) => {
            for (let t = 0; t < n; t++) await null;
          };
          const ids = Array.from({ length: 48 }, (_, i) => i);
          await Promise.all(
            ids.map(async (i) => {
              const record = delivery(`ntf_r${i}`, T0, {
                via: 'sms',
                status: 'sent',
                provider: 'twilio',
                provider_message_id: `SMr${i}`,
                provider_status: 'queued',
              });
              const land = async () => {
                await other.writeRecord(record);
                for (const outcome of (await applyEarlyReceipts(deps(other), record)).values()) count(outcome);
              };
              const report = { providerMessageId: `SMr${i}`, event: 'sent' as const, providerStatus: 'sent', code: null };
              if (i % 4 === 0) {
                const inWindow: Store = Object.assign(Object.create(store) as Store, {
                  holdReceipt: async (...args: Parameters<Store['holdReceipt']>) => {
                    await land();
                    return store.holdReceipt(...args);
                  },
                });
                count(await applyReceipt(deps(inWindow), 'sms', report));
                return;
              }
              await Promise.all([
                turns((i % 6) * 3).then(async () => count(await applyReceipt(deps(store), 'sms', report))),
                turns(Math.floor(i / 6) * 3).then(land),
              ]);
            }),
          );
          expect(applied).toBe(ids.length);
          for (const i of ids) {
            expect((await store.getDelivery(`ntf_r${i}`))!.provider_status).toBe('sent');
            expect(await take(store, sms(`ntf_r${i}`, `SMr${i}`))).toEqual([]);
          }
        } finally {
          await other.close();
        }
      });

      it('gives each held receipt to exactly one of many takers racing on two stores', async () => {
        for (let i = 0; i < 16; i++)
          await store.holdReceipt({ ...held('SM5', 'sent', T0 + i), provider_status: `sent-${i}` }, bounds(T0 + i));
        const record = sms('ntf_t', 'SM5');
        await store.writeRecord(record);
        const other = await h.reopen();
        try {
          const takes = await Promise.all(Array.from({ length: 8 }, (_, i) => take(i % 2 ? other : store, record)));
          const seqs = takes.flat().map((r) => r.seq);
          expect(seqs).toHaveLength(16);
          expect(new Set(seqs).size).toBe(16);
        } finally {
          await other.close();
        }
      });
    });

    describe('idempotency', () => {
      /** Claims `key` and returns the owner token, failing when the claim is not won. */
      async function own(key: string, hash = 'h', now = T0, opts = OPTS): Promise<string> {
        const claim = await store.claimIdempotency(key, hash, now, opts);
        expect(claim).toMatchObject({ kind: 'claimed', phase: 'claimed' });
        return (claim as { owner: string }).owner;
      }

      it('claims once with a fresh owner token, then reports the pending claim with its hash, phase and time', async () => {
        const first = await store.claimIdempotency('k1', 'h1', T0, OPTS);
        expect(first).toEqual({ kind: 'claimed', owner: expect.stringMatching(/^\S{16,}$/), phase: 'claimed' });
        expect(await store.claimIdempotency('k1', 'h1', T0 + 10, OPTS)).toEqual({
          kind: 'existing',
          payload_hash: 'h1',
          state: 'pending',
          phase: 'claimed',
          claimed_at: T0,
        });
        // A different payload sees the first one's hash, so the caller can report a conflict.
        expect(await store.claimIdempotency('k1', 'h2', T0 + 10, OPTS)).toMatchObject({ kind: 'existing', payload_hash: 'h1' });
        // Owner tokens are never reused.
        expect((await store.claimIdempotency('k1b', 'h1', T0, OPTS)) as { owner: string }).not.toMatchObject({
          owner: (first as { owner: string }).owner,
        });
      });

      it('stores the result; later claims see it as done', async () => {
        const owner = await own('k2');
        const result = { id: 'ntf_1', via: 'sms', status: 'sent', segments: 1, nested: { list: [1, 'two', null] } };
        expect(await store.completeIdempotency('k2', owner, result)).toBe(true);
        expect(await store.claimIdempotency('k2', 'h', T0 + HOUR, OPTS)).toEqual({
          kind: 'existing',
          payload_hash: 'h',
          state: 'done',
          result,
          claimed_at: T0,
        });
        // A done claim is never "stale": it replays until the ttl.
        expect(await store.claimIdempotency('k2', 'h', T0 + OPTS.staleAfterMs * 10, OPTS)).toMatchObject({ state: 'done' });
      });

      it('moves a claim to sending for its owner only', async () => {
        const owner = await own('k2s');
        expect(await store.markIdempotencySending('k2s', 'someone-else')).toBe(false);
        expect(await store.claimIdempotency('k2s', 'h', T0 + 1, OPTS)).toMatchObject({ state: 'pending', phase: 'claimed' });
        expect(await store.markIdempotencySending('k2s', owner)).toBe(true);
        expect(await store.markIdempotencySending('k2s', owner)).toBe(true); // idempotent
        expect(await store.claimIdempotency('k2s', 'h', T0 + 2, OPTS)).toMatchObject({
          state: 'pending',
          phase: 'sending',
          claimed_at: T0,
        });
        expect(await store.markIdempotencySending('never-claimed', owner)).toBe(false);
        // A finished claim does not go back to sending.
        expect(await store.completeIdempotency('k2s', owner, { ok: 1 })).toBe(true);
        expect(await store.markIdempotencySending('k2s', owner)).toBe(false);
      });

      it('takes over a stale claim that never reached sending: new owner, phase claimed, the old owner fenced out', async () => {
        const old = await own('k3');
        expect(await store.claimIdempotency('k3', 'h', T0 + OPTS.staleAfterMs - 1, OPTS)).toMatchObject({ state: 'pending' });
        const taken = await store.claimIdempotency('k3', 'h', T0 + OPTS.staleAfterMs, OPTS);
        expect(taken).toEqual({ kind: 'claimed', owner: expect.any(String), phase: 'claimed' });
        const owner = (taken as { owner: string }).owner;
        expect(owner).not.toBe(old);
        // The takeover restarted the clock.
        expect(await store.claimIdempotency('k3', 'h', T0 + OPTS.staleAfterMs + 1, OPTS)).toMatchObject({
          state: 'pending',
          claimed_at: T0 + OPTS.staleAfterMs,
        });
        // The old owner, alive after all, can neither start sending, nor store, nor release.
        expect(await store.markIdempotencySending('k3', old)).toBe(false);
        expect(await store.completeIdempotency('k3', old, { id: 'ntf_old' })).toBe(false);
        expect(await store.releaseIdempotency('k3', old)).toBe(false);
        expect(await store.claimIdempotency('k3', 'h', T0 + OPTS.staleAfterMs + 2, OPTS)).toMatchObject({
          state: 'pending',
          phase: 'claimed',
        });
        expect(await store.markIdempotencySending('k3', owner)).toBe(true);
        expect(await store.completeIdempotency('k3', owner, { id: 'ntf_new' })).toBe(true);
        expect(await store.completeIdempotency('k3', old, { id: 'ntf_old' })).toBe(false);
        expect(await store.claimIdempotency('k3', 'h', T0 + OPTS.staleAfterMs + 3, OPTS)).toMatchObject({
          state: 'done',
          result: { id: 'ntf_new' },
        });
      });

      it('hands a stale claim that reached sending over with phase sending, so the taker knows not to send', async () => {
        const old = await own('k3s');
        expect(await store.markIdempotencySending('k3s', old)).toBe(true);
        const taken = await store.claimIdempotency('k3s', 'h', T0 + OPTS.staleAfterMs, OPTS);
        expect(taken).toEqual({ kind: 'claimed', owner: expect.any(String), phase: 'sending' });
        const owner = (taken as { owner: string }).owner;
        // A taker that died too leaves it sending for the next one.
        const again = await store.claimIdempotency('k3s', 'h', T0 + 2 * OPTS.staleAfterMs, OPTS);
        expect(again).toMatchObject({ kind: 'claimed', phase: 'sending' });
        const last = (again as { owner: string }).owner;
        expect(await store.completeIdempotency('k3s', owner, { lost: true })).toBe(false);
        expect(await store.completeIdempotency('k3s', last, { notify_error: { code: 'DELIVERY_UNKNOWN' } })).toBe(true);
        expect(await store.completeIdempotency('k3s', old, { id: 'ntf_old' })).toBe(false);
        expect(await store.claimIdempotency('k3s', 'h', T0 + 3 * OPTS.staleAfterMs, OPTS)).toMatchObject({
          state: 'done',
          result: { notify_error: { code: 'DELIVERY_UNKNOWN' } },
        });
      });

      it('carries the notification id from the claim on; a taker of a sending claim gets the id it was sent under', async () => {
        const first = await store.claimIdempotency('k3n', 'h', T0, { ...OPTS, notificationId: 'ntf_first' });
        expect(first).toMatchObject({ kind: 'claimed', phase: 'claimed', notification_id: 'ntf_first' });
        // Not sending yet: the taker sends, under its own id.
        const taker = await store.claimIdempotency('k3n', 'h', T0 + OPTS.staleAfterMs, { ...OPTS, notificationId: 'ntf_taker' });
        expect(taker).toMatchObject({ kind: 'claimed', phase: 'claimed', notification_id: 'ntf_taker' });
        // It sends under another id (an approval's): the sending mark names it.
        expect(await store.markIdempotencySending('k3n', (taker as { owner: string }).owner, 'ntf_sent')).toBe(true);
        const last = await store.claimIdempotency('k3n', 'h', T0 + 2 * OPTS.staleAfterMs, { ...OPTS, notificationId: 'ntf_last' });
        expect(last).toMatchObject({ kind: 'claimed', phase: 'sending', notification_id: 'ntf_sent' });
        // A mark without an id keeps the one there; an expired claim starts afresh with the new one.
        const other = await store.claimIdempotency('k3m', 'h', T0, { ...OPTS, notificationId: 'ntf_m' });
        expect(await store.markIdempotencySending('k3m', (other as { owner: string }).owner)).toBe(true);
        expect(await store.claimIdempotency('k3m', 'h', T0 + OPTS.staleAfterMs, OPTS)).toMatchObject({
          kind: 'claimed',
          phase: 'sending',
          notification_id: 'ntf_m',
        });
        expect(
          await store.claimIdempotency('k3m', 'h', T0 + OPTS.ttlMs + OPTS.staleAfterMs, { ...OPTS, notificationId: 'ntf_new' }),
        ).toMatchObject({
          kind: 'claimed',
          phase: 'claimed',
          notification_id: 'ntf_new',
        });
      });

      it('never takes over when staleAfterMs is Number.MAX_SAFE_INTEGER (a waiter polling)', async () => {
        await own('k3b');
        const polling = { ttlMs: OPTS.ttlMs, staleAfterMs: Number.MAX_SAFE_INTEGER };
        expect(await store.claimIdempotency('k3b', 'h', T0 + OPTS.ttlMs - 1, polling)).toMatchObject({ state: 'pending', claimed_at: T0 });
      });

      it('does not hand a stale claim to a different payload (still a conflict)', async () => {
        await own('k4', 'h1');
        expect(await store.claimIdempotency('k4', 'h2', T0 + OPTS.staleAfterMs * 2, OPTS)).toMatchObject({
          kind: 'existing',
          payload_hash: 'h1',
          state: 'pending',
        });
      });

      it('treats claims older than the ttl as absent, whatever their payload, state or phase', async () => {
        const owner = await own('k5', 'h1');
        await store.completeIdempotency('k5', owner, { id: 'ntf_old' });
        expect(await store.claimIdempotency('k5', 'h2', T0 + OPTS.ttlMs - 1, OPTS)).toMatchObject({ state: 'done', payload_hash: 'h1' });
        expect(await store.claimIdempotency('k5', 'h2', T0 + OPTS.ttlMs, OPTS)).toMatchObject({ kind: 'claimed', phase: 'claimed' });
        expect(await store.claimIdempotency('k5', 'h2', T0 + OPTS.ttlMs + 1, OPTS)).toMatchObject({ state: 'pending', payload_hash: 'h2' });
        const sending = await own('k5s');
        await store.markIdempotencySending('k5s', sending);
        expect(await store.claimIdempotency('k5s', 'h', T0 + OPTS.ttlMs, OPTS)).toMatchObject({ kind: 'claimed', phase: 'claimed' });
      });

      it("release frees its owner's pending claim but never a finished one, nor another owner's", async () => {
        const first = await own('k6');
        expect(await store.releaseIdempotency('k6', 'not-the-owner')).toBe(false);
        expect(await store.claimIdempotency('k6', 'h2', T0 + 1, OPTS)).toMatchObject({ state: 'pending', payload_hash: 'h' });
        expect(await store.releaseIdempotency('k6', first)).toBe(true);
        const second = await own('k6', 'h2', T0 + 1);
        expect(await store.releaseIdempotency('k6', first)).toBe(false);
        await store.markIdempotencySending('k6', second);
        expect(await store.completeIdempotency('k6', second, { ok: true })).toBe(true);
        expect(await store.releaseIdempotency('k6', second)).toBe(false);
        expect(await store.claimIdempotency('k6', 'h2', T0 + 2, OPTS)).toMatchObject({ state: 'done', result: { ok: true } });
        expect(await store.releaseIdempotency('never-claimed', second)).toBe(false);
      });

      it('records a dry run and completes its claim in one write, both or neither', async () => {
        const owner = await own('k10');
        const result = { id: 'ntf_r', via: 'email', status: 'dry_run' };
        // Not the owner: nothing is written, neither the record nor the result.
        expect(await store.writeRecord(delivery('ntf_r0', T0), { claim: { key: 'k10', owner: 'forged', result } })).toEqual({
          kind: 'claim_lost',
        });
        expect(await store.writeRecord(delivery('ntf_r0', T0), { claim: { key: 'never-claimed', owner, result } })).toEqual({
          kind: 'claim_lost',
        });
        expect(await store.listDeliveries(10)).toEqual([]);
        expect(await store.claimIdempotency('k10', 'h', T0 + 1, OPTS)).toMatchObject({ state: 'pending', phase: 'claimed' });
        // The owner: the record and the result, together.
        expect(
          await store.writeRecord(delivery('ntf_r1', T0, { idempotency_key: 'k10' }), { claim: { key: 'k10', owner, result } }),
        ).toEqual({ kind: 'written' });
        expect(await store.listDeliveries(10)).toEqual([delivery('ntf_r1', T0, { idempotency_key: 'k10' })]);
        expect(await store.claimIdempotency('k10', 'h', T0 + 2, OPTS)).toEqual({
          kind: 'existing',
          payload_hash: 'h',
          state: 'done',
          result,
          claimed_at: T0,
        });
        // Done: a second write under the claim writes nothing.
        expect(await store.writeRecord(delivery('ntf_r2', T0), { claim: { key: 'k10', owner, result } })).toEqual({ kind: 'claim_lost' });
        expect((await store.listDeliveries(10)).map((d) => d.id)).toEqual(['ntf_r1']);
      });

      it('leaves the claim pending when the record of a dry run cannot be written', async () => {
        await store.writeRecord(delivery('ntf_taken', T0));
        const owner = await own('k11');
        await expect(store.writeRecord(delivery('ntf_taken', T0), { claim: { key: 'k11', owner, result: { id: 'x' } } })).rejects.toThrow();
        expect(await store.claimIdempotency('k11', 'h', T0 + 1, OPTS)).toMatchObject({ state: 'pending', phase: 'claimed' });
      });

      it('gives exactly one of many simultaneous claimers the key', async () => {
        const claims = await Promise.all(Array.from({ length: 40 }, () => store.claimIdempotency('k7', 'h', T0, OPTS)));
        expect(claims.filter((c) => c.kind === 'claimed')).toHaveLength(1);
        expect(claims.filter((c) => c.kind === 'existing' && c.state === 'pending')).toHaveLength(39);
      });

      it('gives exactly one of many simultaneous stale takeovers the key, keeping its phase', async () => {
        const owner = await own('k8');
        await store.markIdempotencySending('k8', owner);
        const later = T0 + OPTS.staleAfterMs + 5;
        const claims = await Promise.all(Array.from({ length: 20 }, () => store.claimIdempotency('k8', 'h', later, OPTS)));
        expect(claims.filter((c) => c.kind === 'claimed')).toEqual([{ kind: 'claimed', owner: expect.any(String), phase: 'sending' }]);
      });

      it('is shared between two stores on the same database, fencing included', async () => {
        const other = await h.reopen();
        try {
          const owner = await own('k9');
          expect(await other.claimIdempotency('k9', 'h', T0 + 1, OPTS)).toMatchObject({ state: 'pending', phase: 'claimed' });
          expect(await other.markIdempotencySending('k9', 'forged')).toBe(false);
          expect(await store.markIdempotencySending('k9', owner)).toBe(true);
          expect(await other.claimIdempotency('k9', 'h', T0 + 2, OPTS)).toMatchObject({ state: 'pending', phase: 'sending' });
          expect(await other.completeIdempotency('k9', owner, { id: 'ntf_x' })).toBe(true);
          expect(await store.claimIdempotency('k9', 'h', T0 + 3, OPTS)).toMatchObject({ state: 'done', result: { id: 'ntf_x' } });
        } finally {
          await other.close();
        }
      });
    });

    describe('rate limits', () => {
      const bucket = (key: string, limit: number, windowMs = HOUR) => ({ key, limit, windowMs });

      it('admits up to the limit in a sliding window, then says how long until there is room', async () => {
        const b = bucket('c:sms', 2, 60_000);
        expect(await store.admitRate([b], T0)).toEqual({ admitted: true });
        expect(await store.admitRate([b], T0 + 30_000)).toEqual({ admitted: true });
        expect(await store.admitRate([b], T0 + 59_999)).toEqual({ admitted: false, waitMs: [1] });
        // The first admission leaves the window at exactly T0 + 60 s.
        expect(await store.admitRate([b], T0 + 60_000)).toEqual({ admitted: true });
        expect(await store.admitRate([b], T0 + 60_001)).toEqual({ admitted: false, waitMs: [29_999] });
        expect(await store.admitRate([bucket('other', 2, 60_000)], T0 + 60_001)).toEqual({ admitted: true });
      });

      it('admits into every bucket or none; a refusal counts nowhere', async () => {
        const [all, sms] = [bucket('c:*', 1), bucket('c:sms', 5)];
        expect(await store.admitRate([all, sms], T0)).toEqual({ admitted: true });
        for (let i = 1; i <= 3; i++) {
          expect(await store.admitRate([all, sms], T0 + i)).toEqual({ admitted: false, waitMs: [HOUR - i, null] });
        }
        // sms holds one admission (the first), not four.
        expect(await store.admitRate([bucket('c:sms', 2)], T0 + 10)).toEqual({ admitted: true });
        expect(await store.admitRate([bucket('c:sms', 2)], T0 + 11)).toMatchObject({ admitted: false });
      });

      it('refuses everything in a bucket whose limit is 0', async () => {
        expect(await store.admitRate([bucket('zero', 0, 1000)], T0)).toEqual({ admitted: false, waitMs: [1000] });
      });

      it('admits exactly the limit of many simultaneous calls over two stores on one database', async () => {
        const other = await h.reopen();
        const b = bucket('burst', 7);
        const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? other : store).admitRate([b], T0 + i)));
        expect(decisions.filter((d) => d.admitted)).toHaveLength(7);
        expect(await other.admitRate([b], T0 + 100)).toMatchObject({ admitted: false });
        expect(await store.admitRate([b], T0 + HOUR + 100)).toEqual({ admitted: true });
      });
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

    describe('approval answers', () => {
      it('keeps the first answer to a question: racing answers on two stores get one answer, one of them first', async () => {
        const other = await h.reopen();
        const TTL = 600_000;
        for (let i = 0; i < 20; i++) {
          const id = `ntf_q${i}`;
          const answers = await Promise.all(
            Array.from({ length: 8 }, (_, j) =>
              (j % 2 === 0 ? store : other).answerApproval(id, j % 4 < 2 ? 'accept' : 'decline', T0, TTL),
            ),
          );
          expect(
            answers.filter((a) => a.first),
            id,
          ).toHaveLength(1);
          expect(new Set(answers.map((a) => a.answer)).size, id).toBe(1);
        }
        expect(await store.answerApproval('ntf_a', 'decline', T0, TTL)).toEqual({ answer: 'decline', first: true });
        expect(await other.answerApproval('ntf_a', 'accept', T0 + 1, TTL)).toEqual({ answer: 'decline', first: false });
        expect(await store.answerApproval('ntf_a', 'decline', T0 + 2, TTL)).toEqual({ answer: 'decline', first: false });
        // Another question is another answer; past the ttl the question is forgotten.
        expect(await other.answerApproval('ntf_b', 'accept', T0, TTL)).toEqual({ answer: 'accept', first: true });
        expect(await store.answerApproval('ntf_a', 'accept', T0 + TTL, TTL)).toEqual({ answer: 'accept', first: true });
      });
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

    describe('banners', () => {
      it('inserts and reads back every field', async () => {
        const b = banner({ severity: 'critical', dedupe_key: 'deploy', text: 'Déploiement \u26a0' });
        expect(await store.insertBanner(b)).toEqual(b);
        expect(await store.getBanner(b.id)).toEqual(b);
        expect(await store.getBanner('bnr_missing')).toBeNull();
        const forever = banner({ expires_at: null });
        await store.insertBanner(forever);
        expect(await store.getBanner(forever.id)).toEqual(forever);
      });

      it('dedupes only among active banners', async () => {
        const first = banner({ dedupe_key: 'outage' });
        await store.insertBanner(first);
        const second = banner({ dedupe_key: 'outage', created_at: T0 + 10, text: 'other' });
        expect(await store.insertBanner(second)).toEqual(first);
        expect(await store.getBanner(second.id)).toBeNull();
        expect(await store.findActiveBannerByDedupe('all', 'outage', T0 + 10)).toEqual(first);

        // Dismissed: a new one is created.
        await store.dismissBanner(first.id, T0 + 20);
        expect(await store.findActiveBannerByDedupe('all', 'outage', T0 + 21)).toBeNull();
        const third = banner({ dedupe_key: 'outage', created_at: T0 + 30 });
        expect(await store.insertBanner(third)).toEqual(third);

        // Expired: a new one is created too.
        const fourth = banner({ dedupe_key: 'outage', created_at: third.expires_at!, expires_at: third.expires_at! + HOUR });
        expect(await store.insertBanner(fourth)).toEqual(fourth);
        expect(await store.findActiveBannerByDedupe('all', 'outage', third.expires_at!)).toEqual(fourth);
        // Other keys and no key never dedupe.
        expect(await store.insertBanner(banner({ dedupe_key: 'other', created_at: T0 + 40 }))).toMatchObject({ dedupe_key: 'other' });
        const a = banner({ created_at: T0 + 50 });
        const b = banner({ created_at: T0 + 50 });
        expect(await store.insertBanner(a)).toEqual(a);
        expect(await store.insertBanner(b)).toEqual(b);
      });

      it('scopes a dedupe key to its audience: the same key in another audience is another banner', async () => {
        const forAll = banner({ audience: 'all', dedupe_key: 'outage' });
        const forAdmins = banner({ audience: 'admins', dedupe_key: 'outage', created_at: T0 + 1, text: 'admins only' });
        expect(await store.insertBanner(forAll)).toEqual(forAll);
        expect(await store.insertBanner(forAdmins)).toEqual(forAdmins);
        // Each audience dedupes against its own banner only.
        expect(await store.insertBanner(banner({ audience: 'admins', dedupe_key: 'outage', created_at: T0 + 2 }))).toEqual(forAdmins);
        expect(await store.insertBanner(banner({ audience: 'all', dedupe_key: 'outage', created_at: T0 + 2 }))).toEqual(forAll);
        const ids = async (audience: string) =>
          (await store.listBanners({ audiences: [audience], status: 'active', now: T0 + 3 })).map((b) => b.id);
        expect(await ids('admins')).toEqual([forAdmins.id]);
        expect(await ids('all')).toEqual([forAll.id]);
        expect(await store.findActiveBannerByDedupe('admins', 'outage', T0 + 3)).toEqual(forAdmins);
        expect(await store.findActiveBannerByDedupe('team:billing', 'outage', T0 + 3)).toBeNull();
        // Dismissing one audience's banner leaves the other's dedupe in place.
        await store.dismissBanner(forAll.id, T0 + 4);
        expect(await store.insertBanner(banner({ audience: 'admins', dedupe_key: 'outage', created_at: T0 + 5 }))).toEqual(forAdmins);
      });

      it('creates one banner per audience when many insert the same dedupe key at once', async () => {
        const many = Array.from({ length: 20 }, (_, i) => banner({ dedupe_key: 'race-audiences', audience: i % 2 ? 'all' : 'admins' }));
        const results = await Promise.all(many.map((b) => store.insertBanner(b)));
        expect(new Set(results.map((r) => r.id)).size).toBe(2);
        expect(new Set(results.filter((r) => r.audience === 'admins').map((r) => r.id)).size).toBe(1);
        expect(results.every((r, i) => r.audience === many[i]!.audience)).toBe(true);
      });

      it('creates one banner when many insert the same dedupe key at once', async () => {
        const many = Array.from({ length: 20 }, () => banner({ dedupe_key: 'race' }));
        const results = await Promise.all(many.map((b) => store.insertBanner(b)));
        expect(new Set(results.map((r) => r.id)).size).toBe(1);
        expect(await store.listBanners({ now: T0 })).toHaveLength(1);
      });

      it('dismisses idempotently, keeping the first dismissal time', async () => {
        const b = banner();
        await store.insertBanner(b);
        expect(await store.dismissBanner(b.id, T0 + 5)).toEqual({ ...b, dismissed_at: T0 + 5 });
        expect(await store.dismissBanner(b.id, T0 + 9)).toEqual({ ...b, dismissed_at: T0 + 5 });
        expect(await store.dismissBanner('bnr_unknown', T0)).toBeNull();
      });

      it('lists by exact audience and by status, newest first', async () => {
        const all1 = banner({ audience: 'all', created_at: T0 });
        const admins = banner({ audience: 'admins', created_at: T0 + 1 });
        const billing = banner({ audience: 'team:billing', created_at: T0 + 2, expires_at: T0 + 100 });
        const dismissed = banner({ audience: 'all', created_at: T0 + 3 });
        const all2 = banner({ audience: 'all', created_at: T0 + 4, expires_at: null });
        for (const b of [all1, admins, billing, dismissed, all2]) await store.insertBanner(b);
        await store.dismissBanner(dismissed.id, T0 + 5);
        const now = T0 + 100; // billing has just expired

        const ids = (bs: BannerRecord[]) => bs.map((b) => b.id);
        expect(ids(await store.listBanners({ now }))).toEqual([all2.id, dismissed.id, billing.id, admins.id, all1.id]);
        expect(ids(await store.listBanners({ now, status: 'active' }))).toEqual([all2.id, admins.id, all1.id]);
        expect(ids(await store.listBanners({ now, status: 'dismissed' }))).toEqual([dismissed.id]);
        expect(ids(await store.listBanners({ now, status: 'expired' }))).toEqual([billing.id]);
        expect(ids(await store.listBanners({ now, audiences: ['all'], status: 'active' }))).toEqual([all2.id, all1.id]);
        // `all` is a segment, not a wildcard; the viewer passes every segment it belongs to.
        expect(ids(await store.listBanners({ now, audiences: ['admins'], status: 'active' }))).toEqual([admins.id]);
        expect(ids(await store.listBanners({ now, audiences: ['all', 'admins'], status: 'active' }))).toEqual([
          all2.id,
          admins.id,
          all1.id,
        ]);
        expect(ids(await store.listBanners({ now: T0 + 99, audiences: ['team:billing'], status: 'active' }))).toEqual([billing.id]);
        expect(ids(await store.listBanners({ now, audiences: ['team'] }))).toEqual([]);
        expect(ids(await store.listBanners({ now, audiences: [] }))).toEqual([]);
        expect(ids(await store.listBanners({ now, limit: 2 }))).toEqual([all2.id, dismissed.id]);
      });

      it('purges banners dismissed or expired before the cut-off, and nothing else', async () => {
        const oldDismissed = banner({ created_at: T0 });
        const oldExpired = banner({ created_at: T0, expires_at: T0 + 10 });
        const recentExpired = banner({ created_at: T0, expires_at: T0 + 1000 });
        const active = banner({ created_at: T0, expires_at: null });
        for (const b of [oldDismissed, oldExpired, recentExpired, active]) await store.insertBanner(b);
        await store.dismissBanner(oldDismissed.id, T0 + 5);
        expect(await store.purgeBanners(T0 + 500)).toBe(2);
        expect((await store.listBanners({ now: T0 + 2000 })).map((b) => b.id).sort()).toEqual([recentExpired.id, active.id].sort());
      });

      it('lists several audiences newest first, ties by insertion order reversed, across audiences and limits', async () => {
        // Deterministic pseudo-random data with many created_at ties, compared with a
        // reference computed here from the inserted records (insertion order = seq).
        let x = 42;
        const rnd = (n: number) => ((x = (x * 1103515245 + 12345) % 2 ** 31), x % n);
        const audiences = ['all', 'admins', 'team:a', 'team:b'];
        const inserted: BannerRecord[] = [];
        for (let i = 0; i < 120; i++) {
          const b = banner({
            audience: audiences[rnd(4)]!,
            created_at: T0 + rnd(15),
            expires_at: rnd(4) === 0 ? null : T0 + 50 + rnd(100),
          });
          await store.insertBanner(b);
          inserted.push(b);
        }
        for (const b of inserted) {
          if (rnd(3) === 0) {
            await store.dismissBanner(b.id, T0 + 60);
            b.dismissed_at = T0 + 60;
          }
        }
        const seq = new Map(inserted.map((b, i) => [b.id, i]));
        const now = T0 + 100;
        const status = (b: BannerRecord) =>
          b.dismissed_at !== null ? 'dismissed' : b.expires_at !== null && b.expires_at <= now ? 'expired' : 'active';
        const cases: { audiences: string[]; status?: 'active' | 'dismissed' | 'expired'; limit?: number }[] = [
          { audiences: ['all', 'admins'], status: 'active', limit: 10 },
          { audiences: ['admins', 'all', 'team:a'], status: 'active', limit: 7 },
          { audiences: ['all', 'admins', 'team:a', 'team:b'], status: 'active' },
          { audiences: ['all', 'all', 'team:b'], status: 'active', limit: 5 },
          { audiences: ['team:b', 'nobody'], status: 'dismissed', limit: 4 },
          { audiences: ['all', 'team:a'], status: 'expired' },
          { audiences: ['all', 'admins'], limit: 12 },
          { audiences: ['admins'] },
          { audiences: ['all', 'admins'], status: 'active', limit: 0 },
          // Longer than one SQLite statement's worth of audiences (read in chunks, merged).
          { audiences: [...Array.from({ length: 18 }, (_, i) => `x${i}`), 'team:b', 'all', 'admins'], status: 'active', limit: 9 },
          { audiences: [...Array.from({ length: 40 }, (_, i) => `x${i}`), 'team:a', 'all'] },
        ];
        for (const c of cases) {
          const expected = inserted
            .filter((b) => c.audiences.includes(b.audience) && (c.status === undefined || status(b) === c.status))
            .sort((a, b) => b.created_at - a.created_at || seq.get(b.id)! - seq.get(a.id)!)
            .slice(0, c.limit ?? Infinity);
          expect(await store.listBanners({ now, ...c }), JSON.stringify(c)).toEqual(expected);
        }
      });

      it('bannersVersion changes on every insert, dismissal and purge, and is shared with other stores', async () => {
        const other = await h.reopen();
        try {
          const seen = new Set<string>();
          const fresh = async () => {
            const v = await store.bannersVersion();
            expect(typeof v).toBe('string');
            expect(seen.has(v), `version ${v} seen before`).toBe(false);
            seen.add(v);
            expect(await other.bannersVersion()).toBe(v);
            return v;
          };
          let v = await fresh();
          // Reads and no-op writes leave it alone.
          await store.listBanners({ now: T0 });
          await store.getBanner('bnr_none');
          await store.dismissBanner('bnr_none', T0);
          expect(await store.bannersVersion()).toBe(v);

          const a = banner({ expires_at: T0 + 10 });
          await store.insertBanner(a);
          v = await fresh();
          // A dedupe hit inserts nothing.
          const keyed = banner({ dedupe_key: 'k' });
          await other.insertBanner(keyed);
          v = await fresh();
          await store.insertBanner(banner({ dedupe_key: 'k' }));
          expect(await store.bannersVersion()).toBe(v);

          await other.dismissBanner(keyed.id, T0 + 1);
          v = await fresh();
          await other.dismissBanner(keyed.id, T0 + 2); // already dismissed
          expect(await store.bannersVersion()).toBe(v);

          expect(await store.purgeBanners(T0 + 5)).toBe(1); // the dismissed one
          v = await fresh();
          expect(await store.purgeBanners(T0 + 5)).toBe(0);
          expect(await store.bannersVersion()).toBe(v);
          expect(await other.purgeBanners(T0 + 20)).toBe(1); // the expired one
          await fresh();
        } finally {
          await other.close();
        }
      });

      it("a process's feed cache sees another store's insert, dismissal and purge on the next read", async () => {
        const other = await h.reopen();
        try {
          const cache = new FeedCache(store);
          const feedIds = async (now: number) =>
            (
              JSON.parse((await cache.render(['all', 'admins'], now)).body.toString('utf8')) as { banners: { banner_id: string }[] }
            ).banners.map((b) => b.banner_id);
          const a = banner({ created_at: T0 - 2, expires_at: T0 + 10 });
          await store.insertBanner(a);
          expect(await feedIds(T0)).toEqual([a.id]);
          const b = banner({ audience: 'admins', created_at: T0 - 1, expires_at: null });
          await other.insertBanner(b);
          expect(await feedIds(T0)).toEqual([b.id, a.id]);
          await other.dismissBanner(b.id, T0);
          expect(await feedIds(T0)).toEqual([a.id]);
          expect(await feedIds(T0 + 10)).toEqual([]); // a expired: no write, the cache knows
          expect(await other.purgeBanners(T0 + 20)).toBe(2);
          const c = banner({ created_at: T0 + 20, expires_at: null });
          await other.insertBanner(c);
          expect(await feedIds(T0 + 20)).toEqual([c.id]);
        } finally {
          await other.close();
        }
      });

      it('survives reopening (migrations are re-run as no-ops)', async () => {
        const b = banner();
        await store.insertBanner(b);
        const again = await h.reopen();
        try {
          expect(await again.getBanner(b.id)).toEqual(b);
        } finally {
          await again.close();
        }
      });
    });
  });
}
