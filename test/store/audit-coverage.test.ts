/**
 * Every write the audit covers appends its entry with the write, on both engines: outbox
 * scheduling (send_at and a quiet-hours hold), the release claim and its outcome, a cancel, an
 * expiry past the grace, a console decision and the approval TTL's expiry, an approved send's
 * release record, an edit and a retraction. A write that changes nothing appends nothing; a
 * fault after the write and before its commit (the audit insert refused by a trigger) leaves
 * neither the write nor an entry; the chain verifies after each.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/store/audit.js';
import { verifyAudit } from '../../src/store/audit-verify.js';
import type { ApprovalRecord, AuditEntry, OutboxEntry, Store } from '../../src/store/types.js';
import { ENGINES, entries, record, T0, type Engine, type Raw } from './audit-engines.js';
import { entry } from './contract/outbox.js';

const ADDRESS = 'alice@example.com';
const BODY = 'the quarterly numbers';

/** An outbox entry of the outbox suite's, ours by id, client and time. */
const waiting = (id: string, extra: Partial<OutboxEntry> = {}): OutboxEntry =>
  entry({
    id,
    client: 'ops-bot',
    call: { via: 'email', to: ADDRESS, subject: 's', body_html: `<p>${BODY}</p>` },
    send_at: T0 + 60_000,
    due_at: T0 + 60_000,
    created_at: T0,
    ...extra,
  });

const held = (outcome: ApprovalRecord['outcome']): ApprovalRecord => ({
  outcome,
  reasons: ['first-contact'],
  payload_sha256: 'a'.repeat(64),
  recipients: [ADDRESS],
});
const CLAIM = { limit: 10, leaseMs: 60_000, graceMs: 3_600_000 };
const CTX = { tool: 'send_notification', recipients: ['@example.com'] };

/** The entries appended since `before` entries, as [notification, kind, client, tool]. */
async function since(store: Store, before: number): Promise<AuditEntry[]> {
  return (await entries(store)).slice(before);
}
const brief = (es: AuditEntry[]) => es.map((e) => [e.notification_id, e.kind, e.client, e.tool]);

/** A trigger that refuses every audit insert: a fault after the write's own statements and before its commit. */
async function breakAudit(raw: Raw, engine: string): Promise<() => Promise<void>> {
  if (engine === 'sqlite') {
    await raw.run(`CREATE TRIGGER audit_fault BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'injected audit fault'); END`);
    return () => raw.run('DROP TRIGGER audit_fault');
  }
  await raw.run(
    `CREATE FUNCTION audit_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected audit fault'; END $$`,
  );
  await raw.run('CREATE TRIGGER audit_fault BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_fault()');
  return async () => {
    await raw.run('DROP TRIGGER audit_fault ON audit_log');
    await raw.run('DROP FUNCTION audit_fault()');
  };
}

describe.each(ENGINES)('audit coverage on %s', (name, open, skip) => {
  let engine: Engine | undefined;
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });

  it.skipIf(skip)(
    'the outbox: scheduled, held, claimed, released, expired, cancelled; a replayed key and a fenced finish append nothing',
    async () => {
      engine = await open();
      const { store } = engine;
      expect(await store.scheduleSend(waiting('ntf_s', { idem_key: '["ops-bot","schedule:k"]', payload_hash: 'h' }), CTX)).toEqual({
        kind: 'scheduled',
      });
      expect((await store.scheduleSend(waiting('ntf_s2', { idem_key: '["ops-bot","schedule:k"]', payload_hash: 'h' }), CTX)).kind).toBe(
        'existing',
      );
      await store.scheduleSend(waiting('ntf_q', { state: 'held', send_at: null, due_at: T0 + 120_000 }), CTX);
      await store.scheduleSend(waiting('ntf_late', { due_at: T0 - 7_200_000, send_at: T0 - 7_200_000 }));
      await store.scheduleSend(waiting('ntf_c', { due_at: T0 + 999_999 }));
      const claim = await store.claimDue(T0 + 60_000, { ...CLAIM, owner: 'w1' });
      expect(claim.due.map((e) => e.id)).toEqual(['ntf_s']);
      expect(claim.expired.map((e) => e.id)).toEqual(['ntf_late']);
      expect(await store.finishRelease('ntf_s', 'someone-else', 'released', null, T0 + 61_000)).toBe(false);
      expect(await store.finishRelease('ntf_s', 'w1', 'released', { id: 'ntf_s', status: 'sent' }, T0 + 61_000)).toBe(true);
      expect(
        (
          await store.moveWaiting('ntf_c', ['scheduled', 'held'], 'cancelled', T0 + 62_000, {
            client: 'ops-bot',
            tool: 'retract_notification',
          })
        )?.moved,
      ).toBe(true);
      expect((await store.moveWaiting('ntf_c', ['scheduled', 'held'], 'cancelled', T0 + 63_000))?.moved).toBe(false);

      const all = await entries(store);
      expect(brief(all)).toEqual([
        ['ntf_s', 'outbox.scheduled', 'ops-bot', 'send_notification'],
        ['ntf_q', 'outbox.held', 'ops-bot', 'send_notification'],
        ['ntf_late', 'outbox.scheduled', 'ops-bot', null],
        ['ntf_c', 'outbox.scheduled', 'ops-bot', null],
        // The claim's order is the due order: the expired one was due first.
        ['ntf_late', 'outbox.expired', 'ops-bot', null],
        ['ntf_s', 'outbox.releasing', 'ops-bot', null],
        ['ntf_s', 'outbox.released', 'ops-bot', null],
        ['ntf_c', 'outbox.cancelled', 'ops-bot', 'retract_notification'],
      ]);
      expect(all[0]).toMatchObject({ recipients: ['@example.com'], at: T0 });
      // The digest binds the call as kept (body and addresses), when it is due, and its key.
      const s = waiting('ntf_s', { idem_key: '["ops-bot","schedule:k"]', payload_hash: 'h' });
      const { id, via, call, state, send_at, due_at, idem_key, payload_hash } = s;
      expect(all[0]!.digest).toBe(digestOf({ id, via, call, state, send_at, due_at, idem_key, payload_hash }));
      const text = JSON.stringify(all);
      for (const clear of [ADDRESS, 'alice', BODY]) expect(text).not.toContain(clear);
      expect(await verifyAudit(store)).toMatchObject({ ok: true, count: 8 });
    },
  );

  it.skipIf(skip)('decisions: approved (who, when, why, the hash), its release record, declined, a lost race, the TTL expiry', async () => {
    engine = await open();
    const { store } = engine;
    for (const id of ['ntf_a', 'ntf_d', 'ntf_x']) {
      await store.writeRecord(record(id, T0, { status: 'pending_approval', approval: held('pending') }), { audit: CTX });
    }
    const before = (await entries(store)).length;
    const approval = { ...held('approved'), decided_by: 'alice-operator', decided_at: T0 + 1_000, reason: 'looks right' };
    expect(await store.decideDelivery('ntf_a', { from: 'pending_approval', status: 'approved', approval, at: T0 + 1_000 })).toBe(true);
    expect(
      await store.decideDelivery('ntf_a', {
        from: 'pending_approval',
        status: 'declined',
        approval: { ...approval, outcome: 'declined' },
        at: T0 + 1_001,
      }),
    ).toBe(false);
    const sent = record('ntf_a', T0, {
      status: 'sent',
      provider: 'smtp',
      attempts: 1,
      provider_message_id: 'm1',
      status_updated_at: T0 + 2_000,
      approval,
    });
    expect(await store.recordRelease(sent)).toBe(true);
    expect(await store.recordRelease(sent)).toBe(false);
    await store.decideDelivery('ntf_d', {
      from: 'pending_approval',
      status: 'declined',
      approval: { ...approval, outcome: 'declined', decided_by: 'bob-operator' },
      at: T0 + 3_000,
    });
    expect(await store.expirePending(T0 + 1, T0 + 90_000_000)).toBe(1);

    const added = await since(store, before);
    expect(brief(added)).toEqual([
      ['ntf_a', 'decision.approved', 'alice-operator', null],
      ['ntf_a', 'request', 'ops-bot', null],
      ['ntf_a', 'outcome.sent', 'ops-bot', null],
      ['ntf_d', 'decision.declined', 'bob-operator', null],
      ['ntf_x', 'decision.expired', null, null],
    ]);
    expect(added[0]!.digest).toBe(
      digestOf({
        id: 'ntf_a',
        status: 'approved',
        decided_by: 'alice-operator',
        decided_at: T0 + 1_000,
        reason: 'looks right',
        payload_sha256: 'a'.repeat(64),
      }),
    );
    expect(added[1]!.digest).toBe(digestOf(sent.payload));
    expect(await verifyAudit(store)).toMatchObject({ ok: true, count: before + 5 });
  });

  it.skipIf(skip)(
    'an edit binds the new exact request; a retraction the post it took back; a stale compare-and-set appends nothing',
    async () => {
      engine = await open();
      const { store } = engine;
      await store.writeRecord(
        record('ntf_p', T0, {
          via: 'slack',
          status: 'sent',
          provider: 'slack',
          attempts: 1,
          provider_message_id: '1712345678.000100',
          payload: { channel: 'C1', text: 'v1' },
        }),
      );
      const before = (await entries(store)).length;
      const edited = { channel: 'C1', text: 'v2' };
      expect(
        await store.amendDelivery('ntf_p', {
          from: 'sent',
          status: 'sent',
          payload: edited,
          provider_status: 'edited',
          at: T0 + 1_000,
          by: { client: 'ops-bot', tool: 'edit_notification' },
        }),
      ).toBe(true);
      expect(
        await store.amendDelivery('ntf_p', {
          from: 'failed',
          status: 'retracted',
          payload: edited,
          provider_status: 'deleted',
          at: T0 + 1_500,
        }),
      ).toBe(false);
      expect(
        await store.amendDelivery('ntf_p', {
          from: 'sent',
          status: 'retracted',
          payload: edited,
          provider_status: 'deleted',
          at: T0 + 2_000,
          by: { client: 'operator', tool: 'retract_notification' },
        }),
      ).toBe(true);
      const added = await since(store, before);
      expect(brief(added)).toEqual([
        ['ntf_p', 'edit', 'ops-bot', 'edit_notification'],
        ['ntf_p', 'retract', 'operator', 'retract_notification'],
      ]);
      expect(added[0]!.digest).toBe(digestOf(edited));
      expect(JSON.stringify(added)).not.toContain('v2');
      expect(await verifyAudit(store)).toMatchObject({ ok: true, count: before + 2 });
    },
  );

  it.skipIf(skip)('a held send withdrawn (pending_approval to cancelled) is a retract entry, not an edit', async () => {
    engine = await open();
    const { store } = engine;
    await store.writeRecord(record('ntf_w', T0, { status: 'pending_approval', approval: held('pending') }));
    const before = (await entries(store)).length;
    const payload = (await store.getDelivery('ntf_w'))!.payload;
    expect(
      await store.amendDelivery('ntf_w', {
        from: 'pending_approval',
        status: 'cancelled',
        payload,
        provider_status: 'deleted',
        at: T0 + 1_000,
        by: { client: 'ops-bot', tool: 'retract_notification' },
      }),
    ).toBe(true);
    expect(brief(await since(store, before))).toEqual([['ntf_w', 'retract', 'ops-bot', 'retract_notification']]);
  });

  it.skipIf(skip)(
    'a fault after the write and before its commit leaves neither the write nor an entry, for every audited write',
    async () => {
      engine = await open();
      const { store, raw } = engine;
      await store.scheduleSend(waiting('ntf_w'));
      await store.scheduleSend(waiting('ntf_r'));
      const claim = await store.claimDue(T0 + 60_000, { ...CLAIM, limit: 1, owner: 'w1' });
      const releasing = claim.due[0]!.id;
      const still = releasing === 'ntf_w' ? 'ntf_r' : 'ntf_w';
      await store.writeRecord(record('ntf_h', T0, { status: 'pending_approval', approval: held('pending') }));
      await store.writeRecord(record('ntf_post', T0, { status: 'sent', provider: 'slack', attempts: 1 }));
      const head = await store.auditHead();
      const count = (await entries(store)).length;
      const heal = await breakAudit(raw, name);
      const approval = { ...held('approved'), decided_by: 'op', decided_at: T0 + 1 };
      const writes: [string, () => Promise<unknown>][] = [
        ['record', () => store.writeRecord(record('ntf_new', T0))],
        ['schedule', () => store.scheduleSend(waiting('ntf_new2'))],
        ['claim', () => store.claimDue(T0 + 60_000, { ...CLAIM, owner: 'w2' })],
        ['finish', () => store.finishRelease(releasing, 'w1', 'released', null, T0 + 61_000)],
        ['cancel', () => store.moveWaiting(still, ['scheduled', 'held'], 'cancelled', T0 + 61_000)],
        ['decision', () => store.decideDelivery('ntf_h', { from: 'pending_approval', status: 'approved', approval, at: T0 + 1 })],
        ['expiry', () => store.expirePending(T0 + 1, T0 + 2)],
        [
          'amend',
          () =>
            store.amendDelivery('ntf_post', { from: 'sent', status: 'retracted', payload: null, provider_status: 'deleted', at: T0 + 3 }),
        ],
      ];
      for (const [what, write] of writes) await expect(write(), what).rejects.toThrow(/injected audit fault/);
      await heal();
      expect(await store.getDelivery('ntf_new')).toBeNull();
      expect(await store.getOutboxEntry('ntf_new2')).toBeNull();
      expect((await store.getOutboxEntry(releasing))?.state).toBe('releasing');
      expect((await store.getOutboxEntry(still))?.state).toBe('scheduled');
      expect((await store.getDelivery('ntf_h'))?.status).toBe('pending_approval');
      expect((await store.getDelivery('ntf_post'))?.status).toBe('sent');
      expect(await store.auditHead()).toEqual(head);
      expect(await entries(store)).toHaveLength(count);
      expect(await verifyAudit(store)).toMatchObject({ ok: true, count });
      // And once the fault is gone the same writes land, with their entries.
      expect(await store.decideDelivery('ntf_h', { from: 'pending_approval', status: 'approved', approval, at: T0 + 1 })).toBe(true);
      expect((await store.auditFor('ntf_h')).map((e) => e.kind)).toEqual([
        'approval.pending',
        'outcome.pending_approval',
        'decision.approved',
      ]);
    },
  );
});
