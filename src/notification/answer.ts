/**
 * The answer use case (DESIGN section 11): a person answers a send's question, by its link's
 * token (the answer page), or by its id (the CLI, for a dry run). The first answer wins and
 * is written with its audit entry in one transaction; an expired question, a question whose
 * message has not left, and a choice not offered take none, and say so. Not to be confused
 * with ./after-answer.ts (writes after a PROVIDER's answer).
 */
import { tokenSha256, TOKEN_SHAPE } from '../core/answer-token.js';
import type { AnswersPort, QuestionAnswer, QuestionRecord } from '../store/ports/answers.js';
import type { DeliveriesPort, DeliveryRecord, DeliveryStatus } from '../store/ports/deliveries.js';

export type AnswerPorts = Pick<AnswersPort, 'getQuestion' | 'questionByToken' | 'answerQuestion'> & Pick<DeliveriesPort, 'getDelivery'>;

/** What an answer names: a link's token, or a notification (the CLI; an SMS reply, with the step it went in when a step's). */
export type AnswerTarget = { token: string } | { id: string; sent_in?: string };

/**
 * A question as it stands now. `open`: it takes an answer until `expires_at`; `record` is the
 * message the answer came through (the first send's, or the escalation step's it went in).
 */
export type QuestionState =
  | { kind: 'open'; question: QuestionRecord; expires_at: number; record: DeliveryRecord }
  | { kind: 'answered'; question: QuestionRecord; answer: QuestionAnswer }
  | { kind: 'expired'; question: QuestionRecord; expires_at: number }
  /** The message has not left (scheduled, held, awaiting approval) or never will: no answer yet. */
  | { kind: 'not_sent'; question: QuestionRecord }
  | { kind: 'unknown' };

export type AnswerResult =
  | { kind: 'recorded'; id: string; answer: QuestionAnswer }
  /** Someone answered first: who, when and what. */
  | { kind: 'answered'; id: string; answer: QuestionAnswer }
  | { kind: 'expired'; id: string; expires_at: number }
  | { kind: 'not_offered'; id: string; choices: readonly string[] }
  | { kind: 'not_sent'; id: string }
  /** Answered from the shell (`only: 'dry_run'`), but the message really left: its recipients answer it. */
  | { kind: 'live'; id: string }
  | { kind: 'unknown' };

/**
 * States a message is in once it left (a dry run "leaves" as its record). `unknown` may have
 * left: a person holding its link or number is the proof that it did.
 */
const LEFT: ReadonlySet<DeliveryStatus> = new Set(['dry_run', 'queued', 'sent', 'delivered', 'undelivered', 'unknown']);

/** When the message left, or undefined while it has not (or never will): a question's life counts from here. */
export function leftAt(record: DeliveryRecord): number | undefined {
  const sent = record.attempt_log.find((a) => a.outcome === 'sent') ?? (record.status === 'unknown' ? record.attempt_log[0] : undefined);
  if (!LEFT.has(record.status) && !(record.status === 'failed' && sent)) return undefined;
  if (sent?.at !== undefined) return sent.at;
  // A dry run held for approval left when it was released (its last status change); any other when recorded.
  return record.approval ? record.status_updated_at : record.created_at;
}

/** The question a token or an id names, and where it stands at `now`. */
export async function questionState(store: AnswerPorts, target: AnswerTarget, now: number): Promise<QuestionState> {
  const question = await questionOfTarget(store, target);
  if (!question) return { kind: 'unknown' };
  if (question.answer) return { kind: 'answered', question, answer: question.answer };
  const first = await store.getDelivery(question.notification_id);
  const step = question.sent_in === undefined ? null : await store.getDelivery(question.sent_in);
  // Its life counts from the first send; a step that left answers it even when the first send did not leave.
  const left = (first && leftAt(first)) ?? (step && leftAt(step));
  const record = step ?? first;
  if (!record || left === undefined || left === null) return { kind: 'not_sent', question };
  const expires_at = left + question.expires_in_s * 1000;
  return now >= expires_at ? { kind: 'expired', question, expires_at } : { kind: 'open', question, expires_at, record };
}

async function questionOfTarget(store: AnswerPorts, target: AnswerTarget): Promise<QuestionRecord | null> {
  if ('token' in target) return TOKEN_SHAPE.test(target.token) ? store.questionByToken(tokenSha256(target.token)) : null;
  const question = await store.getQuestion(target.id);
  return question && target.sent_in !== undefined ? { ...question, sent_in: target.sent_in } : question;
}

/**
 * Answers `choice` for the person `by` (`link`, `cli`, a Slack user…), through `via` (absent:
 * the channel the message went by), at `now`. `only: 'dry_run'`: a dry run's question alone
 * (the CLI: a developer tries the loop without a provider, never answers for a real recipient).
 */
export async function answerQuestion(
  deps: { store: AnswerPorts; now: () => number },
  target: AnswerTarget,
  choice: string,
  by: string,
  via?: string,
  only?: 'dry_run',
): Promise<AnswerResult> {
  const now = deps.now();
  const state = await questionState(deps.store, target, now);
  if (state.kind === 'unknown') return state;
  const id = state.question.notification_id;
  switch (state.kind) {
    case 'answered':
      return { kind: 'answered', id, answer: state.answer };
    case 'expired':
      return { kind: 'expired', id, expires_at: state.expires_at };
    case 'not_sent':
      return { kind: 'not_sent', id };
  }
  if (only === 'dry_run' && state.record.status !== 'dry_run') return { kind: 'live', id };
  if (!state.question.choices.includes(choice)) return { kind: 'not_offered', id, choices: state.question.choices };
  const step = state.question.sent_in;
  const answer: QuestionAnswer = { choice, by, via: via ?? state.record.via, at: now, ...(step !== undefined ? { step } : {}) };
  const written = await deps.store.answerQuestion(id, answer);
  return written.kind === 'recorded' ? { kind: 'recorded', id, answer } : { kind: 'answered', id, answer: written.answer };
}
