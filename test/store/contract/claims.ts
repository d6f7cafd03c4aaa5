/** The claims port: idempotency claims (fenced, taken over, replayed) and approval answers (the first stands). Part of the Store contract (../suite.ts), run on both engines. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/types.js';
import { delivery, HOUR, OPTS, T0, type StoreHandle } from './fixtures.js';

export function claimsContract(open: () => StoreHandle): void {
  let h: StoreHandle;
  let store: Store;
  beforeEach(() => {
    h = open();
    store = h.store;
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
      expect(await store.writeRecord(delivery('ntf_r1', T0, { idempotency_key: 'k10' }), { claim: { key: 'k10', owner, result } })).toEqual(
        { kind: 'written' },
      );
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

  describe('approval answers', () => {
    it('keeps the first answer to a question: racing answers on two stores get one answer, one of them first', async () => {
      const other = await h.reopen();
      const TTL = 600_000;
      for (let i = 0; i < 20; i++) {
        const id = `ntf_q${i}`;
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, j) => (j % 2 === 0 ? store : other).answerApproval(id, j % 4 < 2 ? 'accept' : 'decline', T0, TTL)),
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
}
