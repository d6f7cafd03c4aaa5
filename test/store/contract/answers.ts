/** The answers port: questions, token hashes, the first answer and the answer key. Part of the Store contract (../suite.ts), run on both engines. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/types.js';
import { T0, type StoreHandle } from './fixtures.js';

const question = (id: string) => ({
  notification_id: id,
  prompt: 'Deploy v2?',
  choices: ['Yes', 'No'],
  expires_in_s: 3600,
  created_at: T0,
  client: 'bot',
});
const answer = (choice: string, by = 'link', at = T0 + 1000) => ({ choice, by, via: 'email', at });

export function answersContract(open: () => StoreHandle): void {
  let h: StoreHandle;
  let store: Store;
  beforeEach(() => {
    h = open();
    store = h.store;
  });

  describe('answers', () => {
    it('keeps the first answer key offered, for every store of the same data', async () => {
      const other = await h.reopen();
      expect(await store.answerKey('a'.repeat(43))).toBe('a'.repeat(43));
      expect(await other.answerKey('b'.repeat(43))).toBe('a'.repeat(43));
    });

    it('finds a question by its token hash, once recorded; a second record changes nothing', async () => {
      expect(await store.questionByToken('f'.repeat(64))).toBeNull();
      await store.recordQuestion(question('ntf_q1'), [{ sha256: 'f'.repeat(64), recipient: '' }]);
      await store.recordQuestion({ ...question('ntf_q1'), choices: ['Other'] }, [{ sha256: 'f'.repeat(64), recipient: '' }]);
      const q = await (await h.reopen()).questionByToken('f'.repeat(64));
      expect(q).toEqual({ ...question('ntf_q1'), answer: null });
      expect(await store.getQuestion('ntf_q1')).toEqual(q);
      expect(await store.getQuestion('ntf_none')).toBeNull();
    });

    it('the first answer wins, with one audit entry; a later one is given the first and writes nothing', async () => {
      await store.recordQuestion(question('ntf_q2'), []);
      const before = (await store.auditHead()).seq;
      expect(await store.answerQuestion('ntf_q2', answer('Yes'))).toEqual({ kind: 'recorded' });
      const other = await h.reopen();
      expect(await other.answerQuestion('ntf_q2', answer('No', '+14155550100', T0 + 2000))).toEqual({
        kind: 'answered',
        answer: answer('Yes'),
      });
      expect((await store.getQuestion('ntf_q2'))?.answer).toEqual(answer('Yes'));
      const entries = await store.auditEntries({ afterSeq: before, limit: 10 });
      expect(entries.map((e) => [e.kind, e.notification_id, e.client])).toEqual([['question.answered', 'ntf_q2', 'bot']]);
    });

    it('answers racing on two stores: exactly one is recorded', async () => {
      await store.recordQuestion(question('ntf_q3'), []);
      const other = await h.reopen();
      const results = await Promise.all([
        store.answerQuestion('ntf_q3', answer('Yes')),
        other.answerQuestion('ntf_q3', answer('No')),
        store.answerQuestion('ntf_q3', answer('No')),
      ]);
      expect(results.filter((r) => r.kind === 'recorded')).toHaveLength(1);
    });

    it('lists open questions newest first: neither answered nor expired', async () => {
      await store.recordQuestion({ ...question('ntf_o1'), created_at: T0 }, []);
      await store.recordQuestion({ ...question('ntf_o2'), created_at: T0 + 10 }, []);
      await store.recordQuestion({ ...question('ntf_o3'), created_at: T0 + 20 }, []);
      await store.recordQuestion({ ...question('ntf_old'), created_at: T0 - 3_600_000 }, []);
      await store.answerQuestion('ntf_o2', answer('Yes'));
      expect((await store.openQuestions(T0 + 1000, 10)).map((q) => q.notification_id)).toEqual(['ntf_o3', 'ntf_o1']);
      expect((await store.openQuestions(T0 + 1000, 1)).map((q) => q.notification_id)).toEqual(['ntf_o3']);
      // ntf_o1 expires at T0 + 3600 s exactly: open before, not at.
      expect((await store.openQuestions(T0 + 3_600_000, 10)).map((q) => q.notification_id)).toEqual(['ntf_o3']);
    });

    it('lists the answered among waiting ids in one read', async () => {
      await store.recordQuestion(question('ntf_a'), []);
      await store.recordQuestion(question('ntf_b'), []);
      await store.answerQuestion('ntf_b', answer('No'));
      expect((await store.answeredAmong(['ntf_a', 'ntf_b', 'ntf_c'])).map((q) => q.notification_id)).toEqual(['ntf_b']);
      expect(await store.answeredAmong([])).toEqual([]);
    });

    it('lists the unanswered questions asked of a recipient, newest first, bounded', async () => {
      const tok = (n: number, recipient: string) => ({ sha256: String(n).padStart(64, '0'), recipient });
      await store.recordQuestion({ ...question('ntf_old'), created_at: T0 }, [tok(1, ''), tok(2, '+14155550100')]);
      await store.recordQuestion({ ...question('ntf_new'), created_at: T0 + 10 }, [tok(3, ''), tok(4, '+14155550100')]);
      await store.recordQuestion({ ...question('ntf_done'), created_at: T0 + 20 }, [tok(5, '+14155550100')]);
      await store.recordQuestion({ ...question('ntf_other'), created_at: T0 + 30 }, [tok(6, '+14155550199')]);
      await store.answerQuestion('ntf_done', answer('Yes'));
      const ids = async (r: string, limit = 10) => (await store.unansweredQuestionsTo(r, limit)).map((q) => q.notification_id);
      expect(await ids('+14155550100')).toEqual(['ntf_new', 'ntf_old']);
      expect(await ids('+14155550100', 1)).toEqual(['ntf_new']);
      // The message-wide token ('') names no one.
      expect(await ids('')).toEqual([]);
      expect(await ids('+14155550000')).toEqual([]);
    });

    it("a step's tokens answer the first send's question and say which step: by link, by recipient, and in the answer kept", async () => {
      const tok = (n: number, recipient: string, sent_in?: string) => ({
        sha256: String(n).padStart(64, '0'),
        recipient,
        ...(sent_in ? { sent_in } : {}),
      });
      await store.recordQuestion(question('ntf_root'), [tok(1, ''), tok(2, '+14155550100')]);
      await store.recordQuestion(question('ntf_root'), [tok(3, '', 'ntf_step1'), tok(4, '+14155550199', 'ntf_step1')]);
      expect(await store.questionByToken(tok(1, '').sha256)).toEqual({ ...question('ntf_root'), answer: null });
      expect(await store.questionByToken(tok(3, '').sha256)).toEqual({ ...question('ntf_root'), answer: null, sent_in: 'ntf_step1' });
      const to = async (r: string) => (await store.unansweredQuestionsTo(r, 10)).map((q) => [q.notification_id, q.sent_in]);
      expect(await to('+14155550199')).toEqual([['ntf_root', 'ntf_step1']]);
      expect(await to('+14155550100')).toEqual([['ntf_root', undefined]]);
      expect(await store.answerQuestion('ntf_root', { ...answer('Yes', '+14155550199'), via: 'sms', step: 'ntf_step1' })).toEqual({
        kind: 'recorded',
      });
      expect((await (await h.reopen()).getQuestion('ntf_root'))?.answer).toEqual({
        ...answer('Yes', '+14155550199'),
        via: 'sms',
        step: 'ntf_step1',
      });
      expect(await to('+14155550199')).toEqual([]);
    });
  });
}
