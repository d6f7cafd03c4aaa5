import { describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../store/types.js';
import type { QuestionRecord } from '../store/ports/answers.js';
import { questionSection, questionsBody } from './questions-page.js';

const T0 = Date.UTC(2026, 11, 6, 9);
const q = (over: Partial<QuestionRecord> = {}): QuestionRecord => ({
  notification_id: 'ntf_q1',
  prompt: 'Deploy 142 failed. Roll back?',
  choices: ['Roll back', '<b>Keep</b>'],
  expires_in_s: 3600,
  created_at: T0,
  client: 'bot',
  answer: null,
  ...over,
});
const record = {} as DeliveryRecord;

describe('console questions', () => {
  it('says when none is open, and lists open ones with their choices as text', () => {
    expect(questionsBody([], 200).text).toContain('No question waits for an answer.');
    const listed = questionsBody(
      [
        { kind: 'open', question: q(), expires_at: T0 + 3_600_000, record },
        { kind: 'not_sent', question: q({ notification_id: 'ntf_q2' }) },
      ],
      200,
    ).text;
    expect(listed).toContain('2 open, newest first');
    expect(listed).toContain('href="/console/notifications/ntf_q2"');
    expect(listed).toContain('not sent yet');
    expect(listed).toContain('Deploy 142 failed. Roll back?');
    expect(listed).toContain('&lt;b&gt;Keep&lt;/b&gt;');
    expect(listed).not.toContain('<b>Keep');
  });

  it("shows a notification's question open, answered, expired or not yet asked, and nothing without one", () => {
    expect(questionSection({ kind: 'unknown' }).text).toBe('');
    expect(questionSection({ kind: 'open', question: q(), expires_at: T0, record }).text).toContain('Not answered yet; open until');
    expect(questionSection({ kind: 'expired', question: q(), expires_at: T0 }).text).toContain('Expired at');
    expect(questionSection({ kind: 'not_sent', question: q() }).text).toContain('has not left');
    const answer = { choice: 'Roll back', by: 'U024BE7LH', via: 'slack', at: T0 + 5000 };
    const answered = questionSection({ kind: 'answered', question: q({ answer }), answer }).text;
    expect(answered).toMatch(
      /<dt>Answer<\/dt><dd><strong>Roll back<\/strong><\/dd><dt>By<\/dt><dd>U024BE7LH<\/dd><dt>Through<\/dt><dd>slack<\/dd>/,
    );
  });
});
