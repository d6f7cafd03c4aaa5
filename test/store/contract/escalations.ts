/**
 * Escalation steps in the outbox (DESIGN section 11), part of the Store contract (../suite.ts),
 * run on both engines: an answer cancels the steps still waiting in its own transaction; a
 * claim cancels a step whose first send was answered (read in the claim itself); of an answer
 * and a claim racing on two handles, each step goes to exactly one; a retract's cancel.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/types.js';
import { delivery, T0, type StoreHandle } from './fixtures.js';
import { entry } from './outbox.js';

const OPTS = { limit: 100, leaseMs: 60_000, graceMs: 3_600_000 };
const question = (id: string) => ({
  notification_id: id,
  prompt: 'Disk full',
  choices: ['Acknowledge'],
  expires_in_s: 3600,
  created_at: T0,
  client: 'bot',
});
const ack = (at: number) => ({ choice: 'Acknowledge', by: 'link', via: 'slack', at });

export function escalationsContract(handle: () => StoreHandle): void {
  describe('escalation steps', () => {
    const store = (): Store => handle().store;
    let n = 0;
    /** A first send with `steps` steps; `left`: its record written (it left), else none yet. */
    async function escalation(steps: number, left = true): Promise<{ root: string; ids: string[] }> {
      n += 1;
      const root = `ntf_root_${n}_${Math.random().toString(16).slice(2)}`;
      await store().recordQuestion(question(root), []);
      if (left) await store().writeRecord(delivery(root, T0));
      const ids: string[] = [];
      for (let i = 0; i < steps; i++) {
        const e = entry({ escalates: root, due_at: T0 + 1000 * (i + 1), send_at: T0 + 1000 * (i + 1) });
        await store().scheduleSend(e);
        ids.push(e.id);
      }
      return { root, ids };
    }

    it('keeps an escalation with its tokens in one transaction: a second keep adds nothing, a failure part way keeps none', async () => {
      const root = `ntf_root_tx_${Math.random().toString(16).slice(2)}`;
      const steps = [1, 2].map((i) =>
        entry({ escalates: root, idem_key: `escalate:${root}:${i}`, due_at: T0 + 1000 * i, send_at: T0 + 1000 * i }),
      );
      const tokens = steps.map((s) => ({ sha256: randomBytes(32).toString('hex'), recipient: '', sent_in: s.id }));
      const before = (await store().auditHead()).seq;
      expect(await store().scheduleEscalation(question(root), tokens, steps)).toEqual(steps.map((s) => s.id));
      expect(await store().scheduleEscalation(question(root), tokens, steps)).toEqual([]);
      expect((await store().escalationSteps(root)).map((s) => s.id)).toEqual(steps.map((s) => s.id));
      expect(await store().questionByToken(tokens[1]!.sha256)).toMatchObject({ notification_id: root, sent_in: steps[1]!.id });
      const kinds = (await store().auditEntries({ afterSeq: before, limit: 10 })).map((e) => e.kind);
      expect(kinds).toEqual(['outbox.scheduled', 'outbox.scheduled']);

      // The second step's id is taken (under another key): its insert fails, and the whole keep with it.
      const other = `ntf_root_tx2_${Math.random().toString(16).slice(2)}`;
      const clash = [
        entry({ escalates: other, idem_key: `escalate:${other}:1`, due_at: T0 + 1000 }),
        { ...entry({ escalates: other, idem_key: `escalate:${other}:2`, due_at: T0 + 2000 }), id: steps[0]!.id },
      ];
      const token = { sha256: randomBytes(32).toString('hex'), recipient: '', sent_in: clash[0]!.id };
      await expect(store().scheduleEscalation(question(other), [token], clash)).rejects.toThrow();
      expect(await store().escalationSteps(other)).toEqual([]);
      expect(await store().questionByToken(token.sha256)).toBeNull();
      expect(await store().getQuestion(other)).toBeNull();
    });

    it('keeps the first send a step escalates, and lists the steps in due order', async () => {
      const { root, ids } = await escalation(2);
      expect((await store().getOutboxEntry(ids[0]!))?.escalates).toBe(root);
      expect((await store().escalationSteps(root)).map((s) => s.id)).toEqual(ids);
      expect(await store().escalationSteps('ntf_none')).toEqual([]);
    });

    it('an answer cancels the steps still waiting in its transaction, and leaves a claimed one to its release', async () => {
      const { root, ids } = await escalation(3);
      const claim = await store().claimDue(T0 + 1000, { ...OPTS, owner: 'a' });
      expect(claim.due.map((d) => d.id)).toEqual([ids[0]]);
      const before = (await store().auditHead()).seq;
      expect(await store().answerQuestion(root, ack(T0 + 1500))).toEqual({ kind: 'recorded', cancelled: [ids[1], ids[2]] });
      const states = (await store().escalationSteps(root)).map((s) => s.state);
      expect(states).toEqual(['releasing', 'cancelled', 'cancelled']);
      const kinds = (await store().auditEntries({ afterSeq: before, limit: 10 })).map((e) => [e.kind, e.notification_id]);
      expect(kinds).toContainEqual(['question.answered', root]);
      expect(kinds.filter((k) => k[0] !== 'question.answered')).toHaveLength(2);
      // A later answer cancels nothing more, and is told the first.
      expect((await store().answerQuestion(root, ack(T0 + 1600))).kind).toBe('answered');
    });

    it('a step waits while its first send is in flight; its record lets it go, a failure at the call cancels it, a lease passed lets it go anyway', async () => {
      const lease = OPTS.leaseMs;
      const inFlight = await escalation(1, false);
      const failed = await escalation(1, false);
      const lost = await escalation(1, false);
      const stepIds = [inFlight.ids[0], failed.ids[0], lost.ids[0]];
      const claimed = async (at: number) =>
        (await store().claimDue(at, { ...OPTS, owner: 'a' })).due.map((d) => d.id).filter((id) => stepIds.includes(id));
      expect(await claimed(T0 + 1000)).toEqual([]);
      // Due, for a timer, when it may be claimed: a lease after the steps were kept.
      expect(await store().nextDue(['scheduled', 'held'], lease)).toBeGreaterThanOrEqual(T0 + lease);
      // An approved send's row is there before it leaves: still in flight.
      await store().writeRecord(delivery(inFlight.root, T0 + 500, { status: 'approved' }));
      expect(await claimed(T0 + 1000)).toEqual([]);
      await store().recordRelease({ ...delivery(inFlight.root, T0 + 500), status: 'sent' });
      await store().writeRecord(delivery(failed.root, T0 + 500, { status: 'failed', error_code: 'PROVIDER_REJECTED' }));
      const cancelled = await store().claimDue(T0 + 1000, { ...OPTS, owner: 'a' });
      expect(cancelled.due.map((d) => d.id)).toEqual([inFlight.ids[0]]);
      expect(cancelled.cancelled?.map((c) => c.id)).toEqual([failed.ids[0]]);
      // No record a lease after its steps were kept: its process died in the call; the step goes on.
      expect(await claimed(T0 + lease - 1)).toEqual([]);
      expect(await claimed(T0 + lease + 1)).toEqual([lost.ids[0]]);
    });

    it('a step that waited for its first send is not expired for it: its grace also runs from a lease after it was kept', async () => {
      const { root, ids } = await escalation(1, false);
      const graceMs = 5_000;
      // Due at T0 + 1 s, kept at T0; the first send took 8 s, past the grace from the step's due time.
      await store().writeRecord(delivery(root, T0 + 8_000, { status: 'sent' }));
      expect((await store().claimDue(T0 + 9_000, { ...OPTS, graceMs, owner: 'a' })).due.map((d) => d.id)).toContain(ids[0]);
      // One that a stopped server finds long after, past the lease and the grace, expires as any entry.
      const stale = await escalation(1);
      const late = await store().claimDue(T0 + OPTS.leaseMs + graceMs + 1_001, { ...OPTS, graceMs, owner: 'a' });
      expect(late.expired.map((e) => e.id)).toContain(stale.ids[0]);
    });

    it('a first send failed by a receipt after its provider took it escalates on', async () => {
      const { root, ids } = await escalation(1, false);
      await store().writeRecord(delivery(root, T0, { status: 'failed', provider_message_id: 'SM1', error_code: 'PROVIDER_REJECTED' }));
      expect((await store().claimDue(T0 + 1000, { ...OPTS, owner: 'a' })).due.map((d) => d.id)).toContain(ids[0]);
    });

    it('a claim cancels a step whose first send is answered (a step written after the answer)', async () => {
      const { root } = await escalation(0);
      await store().answerQuestion(root, ack(T0 + 10));
      const late = entry({ escalates: root, due_at: T0 + 1000, send_at: T0 + 1000 });
      await store().scheduleSend(late);
      const claim = await store().claimDue(T0 + 1000, { ...OPTS, owner: 'a' });
      expect(claim.due).toEqual([]);
      expect(claim.cancelled?.map((c) => [c.id, c.state])).toEqual([[late.id, 'cancelled']]);
      expect((await store().getOutboxEntry(late.id))?.state).toBe('cancelled');
      // Another send's entries are claimed as ever in the same pass.
      const other = entry({ due_at: T0 + 1000 });
      await store().scheduleSend(other);
      expect((await store().claimDue(T0 + 1000, { ...OPTS, owner: 'b' })).due.map((d) => d.id)).toEqual([other.id]);
    });

    it('a claim leaves a step waiting while its first send awaits approval, and cancels it once the first send ended unsent', async () => {
      const pending = await escalation(1, false);
      await store().writeRecord(delivery(pending.root, T0, { status: 'pending_approval' }));
      const declined = await escalation(1, false);
      await store().writeRecord(delivery(declined.root, T0, { status: 'declined' }));
      const cancelledRoot = entry({ due_at: T0 + 3_600_000 });
      await store().scheduleSend(cancelledRoot);
      await store().moveWaiting(cancelledRoot.id, ['scheduled'], 'cancelled', T0);
      const orphan = entry({ escalates: cancelledRoot.id, due_at: T0 + 1000 });
      await store().scheduleSend(orphan);
      const claim = await store().claimDue(T0 + 1000, { ...OPTS, owner: 'a' });
      expect(claim.due).toEqual([]);
      expect((claim.cancelled ?? []).map((c) => c.id).sort()).toEqual([declined.ids[0], orphan.id].sort());
      expect((await store().getOutboxEntry(pending.ids[0]!))?.state).toBe('scheduled');
      expect((await store().claimDue(T0 + 1000, { ...OPTS, owner: 'a', id: pending.ids[0]! })).due).toEqual([]);
    });

    it('an answer racing a claim on two handles: each step is either claimed or cancelled, never both', async () => {
      for (let round = 0; round < 5; round++) {
        const { root, ids } = await escalation(4);
        const other = await handle().reopen();
        const [answered, claim] = await Promise.all([
          store().answerQuestion(root, ack(T0 + 5000)),
          other.claimDue(T0 + 5000, { ...OPTS, owner: 'b', limit: 1000 }),
        ]);
        expect(answered.kind).toBe('recorded');
        const cancelledByAnswer = answered.kind === 'recorded' ? (answered.cancelled ?? []) : [];
        const claimed = claim.due.filter((d) => ids.includes(d.id)).map((d) => d.id);
        const cancelledByClaim = (claim.cancelled ?? []).map((c) => c.id);
        expect([...claimed, ...cancelledByAnswer, ...cancelledByClaim].sort()).toEqual([...ids].sort());
        const states = (await store().escalationSteps(root)).map((s) => s.state);
        expect(states.filter((s) => s === 'releasing')).toHaveLength(claimed.length);
        expect(states.filter((s) => s === 'cancelled')).toHaveLength(ids.length - claimed.length);
      }
    });

    it("a retract's cancel moves only the steps still waiting, once", async () => {
      const { root, ids } = await escalation(2);
      await store().claimDue(T0 + 1000, { ...OPTS, owner: 'a' });
      expect(await store().cancelEscalation(root, T0 + 1200)).toEqual([ids[1]]);
      expect(await store().cancelEscalation(root, T0 + 1300)).toEqual([]);
      expect((await store().escalationSteps(root)).map((s) => s.state)).toEqual(['releasing', 'cancelled']);
    });
  });
}
