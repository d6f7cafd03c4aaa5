/**
 * The outbox and the caps of the Store contract, run inside storeSuite (../suite.ts) on both engines: a
 * due entry goes to exactly one claimer, expiry past the grace, the fenced finish, a cancel
 * racing a release (exactly one wins), and caps charged all or none across two handles.
 */
import { describe, expect, it } from 'vitest';
import { waitingEntry, type OutboxEntry, type Store } from '../../../src/store/types.js';
import { delivery, type StoreHandle } from './fixtures.js';

const T0 = Date.UTC(2026, 0, 1);
const OPTS = { limit: 100, leaseMs: 60_000, graceMs: 3_600_000 };
let n = 0;

export function entry(extra: Partial<Parameters<typeof waitingEntry>[0]> = {}): OutboxEntry {
  n += 1;
  return waitingEntry({
    id: `ntf_outbox_${n}_${Math.random().toString(16).slice(2)}`,
    via: 'email',
    client: 'bot',
    call: { via: 'email', to: 'a@example.com', subject: 's', body_html: '<p>h\u00e9</p>' },
    state: 'scheduled',
    send_at: T0 + 1000,
    due_at: T0 + 1000,
    created_at: T0,
    ...extra,
  });
}

export function outboxContract(handle: () => StoreHandle): void {
  describe('outbox', () => {
    const store = (): Store => handle().store;

    it('keeps an entry as given, and claims it only once due', async () => {
      const e = entry();
      expect(await store().scheduleSend(e)).toEqual({ kind: 'scheduled' });
      expect(await store().getOutboxEntry(e.id)).toEqual(e);
      expect(await store().nextDue(['scheduled', 'held'], 60_000)).toBe(T0 + 1000);
      expect(await store().claimDue(T0 + 999, { ...OPTS, owner: 'a' })).toEqual({ due: [], expired: [] });
      const claim = await store().claimDue(T0 + 1000, { ...OPTS, owner: 'a' });
      expect(claim.due.map((d) => [d.id, d.state, d.owner, d.claimed_at])).toEqual([[e.id, 'releasing', 'a', T0 + 1000]]);
      expect((await store().claimDue(T0 + 2000, { ...OPTS, owner: 'b' })).due).toEqual([]);
      expect(await store().nextDue(['scheduled', 'held'], 60_000)).toBeNull();
    });

    it('a keyed entry replays: a second one under the key writes nothing and gives the first', async () => {
      const first = entry({ idem_key: '["bot","schedule:k1"]', payload_hash: 'h1' });
      await store().scheduleSend(first);
      const again = await store().scheduleSend(entry({ idem_key: '["bot","schedule:k1"]', payload_hash: 'h2' }));
      expect(again).toEqual({ kind: 'existing', entry: first });
    });

    it('the finish is fenced by the owner; a release whose lease ran out is claimed again', async () => {
      const e = entry();
      await store().scheduleSend(e);
      await store().claimDue(T0 + 1000, { ...OPTS, owner: 'a' });
      // b takes it over once a's lease has run out (a died).
      const taken = await store().claimDue(T0 + 1000 + OPTS.leaseMs, { ...OPTS, owner: 'b' });
      expect(taken.due.map((d) => d.owner)).toEqual(['b']);
      expect(await store().finishRelease(e.id, 'a', 'released', { late: true }, T0 + 70_000)).toBe(false);
      expect(await store().finishRelease(e.id, 'b', 'released', { id: e.id }, T0 + 70_000)).toBe(true);
      expect(await store().getOutboxEntry(e.id)).toMatchObject({ state: 'released', outcome: { id: e.id }, finished_at: T0 + 70_000 });
      expect((await store().claimDue(T0 + 999_999, { ...OPTS, owner: 'c' })).due).toEqual([]);
    });

    it('released dry runs: each record written with the end of its release, in one write, only where the owner still holds it', async () => {
      const [mine, taken, opted] = [entry({ via: 'sms' }), entry({ via: 'sms' }), entry({ via: 'sms' })];
      for (const e of [mine, taken, opted]) await store().scheduleSend(e);
      await store().claimDue(T0 + 1000, { ...OPTS, owner: 'a' });
      // b takes `taken` over (a's lease ran out): a's record of it must not be written.
      await store().moveWaiting(taken.id, ['releasing'], 'scheduled', T0 + 1000);
      await store().claimDue(T0 + 2000, { ...OPTS, owner: 'b', id: taken.id });
      await store().addOptOut('sms', '+14155550111', T0);
      const rec = (id: string) => delivery(id, T0 + 1500, { via: 'sms', status: 'dry_run', idempotency_key: `outbox:${id}` });
      const written = await store().recordReleases(
        'a',
        [
          {
            id: mine.id,
            record: rec(mine.id),
            outcome: { id: mine.id, status: 'dry_run' },
            optOut: { via: 'sms', recipients: ['+14155550100'] },
            audit: { tool: null, recipients: ['sms-number'] },
          },
          { id: taken.id, record: rec(taken.id), outcome: { id: taken.id } },
          {
            id: opted.id,
            record: rec(opted.id),
            outcome: { id: opted.id },
            optOut: { via: 'sms', recipients: ['+14155550100', '+14155550111'] },
          },
        ],
        T0 + 1600,
      );
      expect(written).toEqual([{ kind: 'written' }, { kind: 'claim_lost' }, { kind: 'opted_out', recipient: '+14155550111' }]);
      expect(await store().getOutboxEntry(mine.id)).toMatchObject({
        state: 'released',
        outcome: { id: mine.id, status: 'dry_run' },
        finished_at: T0 + 1600,
      });
      expect(await store().getDelivery(mine.id)).toEqual(rec(mine.id));
      expect(await store().getOutboxEntry(taken.id)).toMatchObject({ state: 'releasing', owner: 'b' });
      expect(await store().getDelivery(taken.id)).toBeNull();
      expect(await store().getOutboxEntry(opted.id)).toMatchObject({ state: 'releasing', owner: 'a' });
      expect(await store().getDelivery(opted.id)).toBeNull();
      // The written record's entries and its release's end joined the chain; of the one taken
      // over, only its outbox moves (scheduled, claimed by a, back, claimed by b).
      const kinds = async (id: string) => (await store().auditEntries({ afterSeq: 0, limit: 1000, notificationId: id })).map((e) => e.kind);
      const ofMine = await kinds(mine.id);
      expect(ofMine).toContain('outbox.released');
      expect(ofMine.filter((k) => !k.startsWith('outbox.')).length).toBeGreaterThan(0);
      expect(await kinds(taken.id)).toEqual(['outbox.scheduled', 'outbox.releasing', 'outbox.scheduled', 'outbox.releasing']);
    });

    it('a release held again (a cap reached) waits until its new due time, fenced by the owner', async () => {
      const e = entry();
      await store().scheduleSend(e);
      await store().claimDue(T0 + 1000, { ...OPTS, owner: 'a' });
      expect(await store().holdRelease(e.id, 'b', T0 + 9000, T0)).toBe(false);
      expect(await store().holdRelease(e.id, 'a', T0 + 9000, T0)).toBe(true);
      expect(await store().getOutboxEntry(e.id)).toMatchObject({
        state: 'held',
        due_at: T0 + 9000,
        send_at: T0 + 1000,
        owner: null,
        claimed_at: null,
      });
      expect((await store().claimDue(T0 + 8999, { ...OPTS, owner: 'c' })).due).toEqual([]);
      expect((await store().claimDue(T0 + 9000, { ...OPTS, owner: 'c' })).due.map((d) => [d.id, d.owner])).toEqual([[e.id, 'c']]);
      expect(await store().holdRelease(e.id, 'a', T0 + 99_000, T0)).toBe(false);
    });

    it('an entry due longer ago than the grace expires instead of being claimed', async () => {
      const late = entry({ due_at: T0, send_at: T0 });
      const onTime = entry({ due_at: T0 + OPTS.graceMs, send_at: T0 + OPTS.graceMs });
      await store().scheduleSend(late);
      await store().scheduleSend(onTime);
      const claim = await store().claimDue(T0 + OPTS.graceMs + 1, { ...OPTS, owner: 'a' });
      expect(claim.expired.map((e) => [e.id, e.state])).toEqual([[late.id, 'expired']]);
      expect(claim.due.map((e) => e.id)).toEqual([onTime.id]);
      expect((await store().getOutboxEntry(late.id))!.state).toBe('expired');
    });

    it('claims only the entry asked for (a held send released on its own)', async () => {
      const a = entry({ state: 'held' });
      const b = entry();
      await store().scheduleSend(a);
      await store().scheduleSend(b);
      const claim = await store().claimDue(T0 + 5000, { ...OPTS, owner: 'x', id: a.id });
      expect(claim.due.map((e) => e.id)).toEqual([a.id]);
      expect((await store().getOutboxEntry(b.id))!.state).toBe('scheduled');
    });

    it('a cancel and a release racing: exactly one wins, and each is told', async () => {
      const other = await handle().reopen();
      for (let i = 0; i < 20; i++) {
        const e = entry();
        await store().scheduleSend(e);
        const [moved, claim] = await Promise.all([
          store().moveWaiting(e.id, ['scheduled', 'held'], 'cancelled', T0 + 1000),
          other.claimDue(T0 + 1000, { ...OPTS, owner: 'r', id: e.id }),
        ]);
        const released = claim.due.length === 1;
        expect(moved!.moved).toBe(!released);
        expect(moved!.entry.state).toBe(released ? 'releasing' : 'cancelled');
        expect((await store().getOutboxEntry(e.id))!.state).toBe(released ? 'releasing' : 'cancelled');
      }
      expect(await store().moveWaiting('ntf_none', ['scheduled'], 'cancelled', T0)).toBeNull();
    });

    /** An approved send waiting for its release: its row `approved`, its entry bound to the approved hash. */
    async function approvedWaiting(): Promise<OutboxEntry> {
      const sha = 'a'.repeat(64);
      const e = entry({ approved_sha256: sha, call: {} });
      await store().writeRecord(
        delivery(e.id, T0, {
          status: 'approved',
          payload: 'p1',
          approval: { outcome: 'approved', reasons: ['email'], payload_sha256: sha },
        }),
      );
      await store().scheduleSend(e);
      return e;
    }
    const revise = {
      revise: { payload: 'p2', approval: { outcome: 'pending' as const, reasons: ['email'], payload_sha256: 'b'.repeat(64) }, at: T0 + 5 },
    };

    it('an approved send taken back: its entry cancelled and its row moved on in one write, audited', async () => {
      const edited = await approvedWaiting();
      expect(await store().takeBackApproved(edited.id, revise, T0 + 5)).toBe(true);
      expect((await store().getOutboxEntry(edited.id))!.state).toBe('cancelled');
      expect(await store().getDelivery(edited.id)).toMatchObject({
        status: 'pending_approval',
        payload: 'p2',
        approval: { outcome: 'pending' },
      });
      expect((await store().auditFor(edited.id)).map((a) => a.kind)).toEqual(expect.arrayContaining(['outbox.cancelled']));
      const retracted = await approvedWaiting();
      const amend = { amend: { status: 'retracted' as const, payload: 'p1', provider_status: 'deleted', at: T0 + 6 } };
      expect(await store().takeBackApproved(retracted.id, amend, T0 + 6, { client: 'ops', tool: 'console' })).toBe(true);
      expect((await store().getOutboxEntry(retracted.id))!.state).toBe('cancelled');
      expect((await store().getDelivery(retracted.id))!.status).toBe('retracted');
    });

    it('all or nothing: a release that claimed it first, or a row that moved on, leaves both as they were', async () => {
      const claimed = await approvedWaiting();
      await store().claimDue(T0 + 1000, { ...OPTS, owner: 'r', id: claimed.id });
      expect(await store().takeBackApproved(claimed.id, revise, T0 + 5)).toBe(false);
      expect((await store().getOutboxEntry(claimed.id))!.state).toBe('releasing');
      expect((await store().getDelivery(claimed.id))!.status).toBe('approved');
      // The entry still waits but the row is no longer `approved`: the cancel is rolled back with the rest.
      const moved = await approvedWaiting();
      await store().amendDelivery(moved.id, {
        from: 'approved',
        status: 'retracted',
        payload: 'p1',
        provider_status: 'deleted',
        at: T0 + 3,
      });
      expect(await store().takeBackApproved(moved.id, revise, T0 + 5)).toBe(false);
      expect((await store().getOutboxEntry(moved.id))!.state).toBe('scheduled');
      expect((await store().getDelivery(moved.id))!.status).toBe('retracted');
    });

    it('a take-back and a release racing: exactly one wins, 30 trials', async () => {
      const other = await handle().reopen();
      for (let i = 0; i < 30; i++) {
        const e = await approvedWaiting();
        const [taken, claim] = await Promise.all([
          store().takeBackApproved(e.id, revise, T0 + 5),
          other.claimDue(T0 + 1000, { ...OPTS, owner: 'r', id: e.id }),
        ]);
        expect(taken).toBe(claim.due.length === 0);
        expect((await store().getOutboxEntry(e.id))!.state).toBe(taken ? 'cancelled' : 'releasing');
        expect((await store().getDelivery(e.id))!.status).toBe(taken ? 'pending_approval' : 'approved');
      }
    });

    it('two handles claiming the same due batch split it: every entry to exactly one', async () => {
      const other = await handle().reopen();
      const ids = new Set<string>();
      for (let i = 0; i < 60; i++) {
        const e = entry();
        ids.add(e.id);
        await store().scheduleSend(e);
      }
      const claims = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? other : store()).claimDue(T0 + 1000, { ...OPTS, limit: 15, owner: `o${i}` })),
      );
      const got = claims.flatMap((c) => c.due.map((d) => d.id));
      expect(got.length).toBe(new Set(got).size);
      const rest = await store().claimDue(T0 + 1000, { ...OPTS, owner: 'last' });
      expect(new Set([...got, ...rest.due.map((d) => d.id)])).toEqual(ids);
      expect(await store().listOutbox(['scheduled'], 10)).toEqual([]);
      expect((await store().listOutbox(['releasing'], 1000)).length).toBe(60);
    });

    it('caps: charged all or none, refused past the limit, reset once the period ends', async () => {
      const other = await handle().reopen();
      const c = (amount: number, resets = T0 + 3_600_000) => [
        { key: 'a', limit: 10, amount, resets_at: resets },
        { key: 'b', limit: 100, amount: 1, resets_at: resets },
      ];
      expect(await store().chargeCaps(c(6), T0)).toEqual({ admitted: true });
      expect(await other.chargeCaps(c(5), T0 + 1)).toEqual({ admitted: false, key: 'a', used: 6, resets_at: T0 + 3_600_000 });
      // The refusal charged nothing, not even b.
      expect(await store().listCapCounters(T0)).toEqual([
        { key: 'a', used: 6, resets_at: T0 + 3_600_000 },
        { key: 'b', used: 1, resets_at: T0 + 3_600_000 },
      ]);
      expect(await other.chargeCaps(c(4), T0 + 2)).toEqual({ admitted: true });
      expect(await store().chargeCaps(c(1), T0 + 3)).toMatchObject({ admitted: false, used: 10 });
      // The next hour starts again from zero.
      expect(await store().chargeCaps(c(10, T0 + 7_200_000), T0 + 3_600_000)).toEqual({ admitted: true });
      expect(await store().listCapCounters(T0 + 3_600_000)).toEqual([
        { key: 'a', used: 10, resets_at: T0 + 7_200_000 },
        { key: 'b', used: 1, resets_at: T0 + 7_200_000 },
      ]);
    });

    it('caps: concurrent charges from two handles never pass the limit together', async () => {
      const other = await handle().reopen();
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? other : store()).chargeCaps([{ key: 'race', limit: 25, amount: 1, resets_at: T0 + 3_600_000 }], T0),
        ),
      );
      expect(results.filter((r) => r.admitted).length).toBe(25);
      expect(await store().listCapCounters(T0)).toEqual([{ key: 'race', used: 25, resets_at: T0 + 3_600_000 }]);
    });
  });
}
