/**
 * The answers port (../ports/answers.ts), written once over a Dialect: both engines run these
 * statements unchanged; each hands in its own audited transaction and its JSON-array read.
 */
import type { AuditedChange } from '../audit.js';
import type { AnswersPort, AnswerWrite, QuestionAnswer, QuestionRecord } from '../ports/answers.js';
import { statement, type Dialect } from './dialect.js';
import { INSERT_QUESTION, INSERT_TOKEN } from './question-inserts.js';
import { CANCEL_STEPS, stepsCancelled, type AuditedAll } from './escalations.js';
import { num, numOrNull, type Row } from './rows.js';

const COLUMNS =
  'notification_id, prompt, choices, expires_in_s, created_at, client, answer_choice, answer_by, answer_via, answered_at, answer_in';
const Q_COLUMNS = COLUMNS.split(', ')
  .map((c) => `q.${c}`)
  .join(', ');

const KEEP_KEY = statement('keep-answer-key', 'INSERT INTO answer_key (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING');
const READ_KEY = statement('read-answer-key', 'SELECT key FROM answer_key WHERE id = 1');
const GET_QUESTION = statement('get-question', `SELECT ${COLUMNS} FROM questions WHERE notification_id = $1`);
const QUESTION_BY_TOKEN = statement(
  'question-by-token',
  `SELECT ${Q_COLUMNS}, t.sent_in AS token_sent_in FROM question_tokens t JOIN questions q ON q.notification_id = t.notification_id WHERE t.sha256 = $1`,
);
const UNANSWERED_TO = statement(
  'unanswered-questions-to',
  `SELECT ${Q_COLUMNS}, t.sent_in AS token_sent_in FROM question_tokens t JOIN questions q ON q.notification_id = t.notification_id
   WHERE t.recipient = $1 AND t.recipient <> '' AND q.answered_at IS NULL
   ORDER BY q.created_at DESC, q.notification_id DESC, t.sent_in DESC LIMIT $2`,
);
const OPEN_QUESTIONS = statement(
  'open-questions',
  `SELECT ${COLUMNS} FROM questions WHERE answered_at IS NULL AND created_at + expires_in_s * 1000 > $1
   ORDER BY created_at DESC, notification_id DESC LIMIT $2`,
);
/** The first answer only: a question already answered matches no row, so nothing changes and nothing is audited. */
const ANSWER = statement(
  'answer-question',
  `UPDATE questions SET answer_choice = $2, answer_by = $3, answer_via = $4, answered_at = $5, answer_in = $6
   WHERE notification_id = $1 AND answered_at IS NULL RETURNING notification_id, client`,
);

function questionFromRow(r: Row): QuestionRecord {
  const answeredAt = numOrNull(r.answered_at);
  return {
    notification_id: r.notification_id as string,
    prompt: r.prompt as string,
    choices: JSON.parse(r.choices as string) as string[],
    expires_in_s: num(r.expires_in_s),
    created_at: num(r.created_at),
    client: (r.client as string | null) ?? null,
    answer:
      answeredAt === null
        ? null
        : {
            choice: r.answer_choice as string,
            by: r.answer_by as string,
            via: r.answer_via as string,
            at: answeredAt,
            ...(typeof r.answer_in === 'string' ? { step: r.answer_in } : {}),
          },
  };
}

/** A question read through one of its tokens: the message that token went in, when a step's. */
function withSentIn(row: Row): QuestionRecord {
  const q = questionFromRow(row);
  return typeof row.token_sent_in === 'string' ? { ...q, sent_in: row.token_sent_in } : q;
}

/** The port over `sql` on `engine`; `inJson(p)` is the engine's subquery of the values of JSON array parameter `p`. */
export function sqlAnswers(engine: string, sql: Dialect, audited: AuditedAll, inJson: (p: string) => string): AnswersPort {
  const answered = statement(
    `${engine}-answered-among`,
    `SELECT ${COLUMNS} FROM questions WHERE answered_at IS NOT NULL AND notification_id IN (${inJson('$1')})`,
  );
  return {
    async answerKey(candidate) {
      await sql.run(KEEP_KEY, [candidate]);
      return (await sql.get(READ_KEY, []))!.key as string;
    },
    async recordQuestion(q, tokens) {
      await sql.run(INSERT_QUESTION, [q.notification_id, q.prompt, JSON.stringify(q.choices), q.expires_in_s, q.created_at, q.client]);
      for (const t of tokens) await sql.run(INSERT_TOKEN, [t.sha256, q.notification_id, t.recipient, t.sent_in ?? null]);
    },
    async getQuestion(id) {
      const row = await sql.get(GET_QUESTION, [id]);
      return row ? questionFromRow(row) : null;
    },
    async questionByToken(sha256) {
      const row = await sql.get(QUESTION_BY_TOKEN, [sha256]);
      return row ? withSentIn(row) : null;
    },
    async unansweredQuestionsTo(recipient, limit) {
      return (await sql.all(UNANSWERED_TO, [recipient, limit])).map(withSentIn);
    },
    async answeredAmong(ids) {
      if (ids.length === 0) return [];
      return (await sql.all(answered, [JSON.stringify(ids)])).map(questionFromRow);
    },
    async openQuestions(after, limit) {
      return (await sql.all(OPEN_QUESTIONS, [after, limit])).map(questionFromRow);
    },
    async answerQuestion(id, a: QuestionAnswer): Promise<AnswerWrite> {
      // The answer and the cancel of its escalation's steps still waiting, in one transaction:
      // a step's claim reads the answer in its own statement, so each step is either claimed
      // before this commits (it leaves; the answer still lands) or cancelled here.
      const [rows, cancelled] = await audited(
        [
          { s: ANSWER, params: [id, a.choice, a.by, a.via, a.at, a.step ?? null] },
          { s: CANCEL_STEPS, params: [id, a.at] },
        ],
        ([written, moved]): AuditedChange[] => [
          ...written!.map((r): AuditedChange => ({ write: 'question-answer', id, client: (r.client as string | null) ?? null, answer: a })),
          ...stepsCancelled(moved!, id, a.at, 'answered'),
        ],
      );
      if (rows!.length === 1)
        return cancelled!.length > 0 ? { kind: 'recorded', cancelled: cancelled!.map((r) => r.id as string) } : { kind: 'recorded' };
      const first = (await sql.get(GET_QUESTION, [id])) ?? undefined;
      const answer = first ? questionFromRow(first).answer : null;
      // No row moved and none answered: the question is not there (the caller read it a moment ago).
      if (!answer) throw new Error(`question ${id} was neither answered now nor before`);
      return { kind: 'answered', answer };
    },
  };
}
