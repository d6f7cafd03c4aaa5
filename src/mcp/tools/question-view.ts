/**
 * get_notification's question and answer (DESIGN section 11), and its wait for the answer
 * (`wait_s`): what the result adds to a notification that asked.
 */
import { leftAt } from '../../notification/answer.js';
import type { AnswerWaits } from '../../notification/answer-waits.js';
import type { AnswersPort } from '../../store/ports/answers.js';
import type { DeliveryRecord } from '../../store/ports/deliveries.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** The output schema's properties for them. */
export const QUESTION_OUTPUT = {
  question: {
    type: 'object',
    description: 'what the send asked (ask): its choices, and when it stops taking an answer once the message has left',
    properties: { choices: { type: 'array', items: { type: 'string' } }, expires_at: { type: 'string', format: 'date-time' } },
    required: ['choices'],
  },
  answer: {
    type: 'object',
    description:
      'the first answer: the choice, who gave it (link, a user ID, a number), through what, and when; step: the escalation step whose message took it',
    properties: {
      choice: { type: 'string' },
      by: { type: 'string' },
      via: { type: 'string' },
      at: { type: 'string', format: 'date-time' },
      step: { type: 'string' },
    },
    required: ['choice', 'by', 'via', 'at'],
  },
  wait: {
    type: 'string',
    enum: ['answered', 'timeout', 'busy'],
    description: 'how wait_s ended; busy: too many waits open on this server, so this is the state now, unwaited',
  },
} as const;

/** The question and answer of notification `id`, as the result shows them; nothing when it did not ask. */
export async function questionFields(
  store: Pick<AnswersPort, 'getQuestion'>,
  id: string,
  record: DeliveryRecord | null,
): Promise<Record<string, unknown>> {
  const q = await store.getQuestion(id);
  if (!q) return {};
  const left = record ? leftAt(record) : undefined;
  const out: Record<string, unknown> = {
    question: { choices: q.choices, ...(left !== undefined ? { expires_at: iso(left + q.expires_in_s * 1000) } : {}) },
  };
  if (q.answer) {
    const { choice, by, via, at, step } = q.answer;
    out.answer = { choice, by, via, at: iso(at), ...(step !== undefined ? { step } : {}) };
  }
  return out;
}

/**
 * Waits up to `waitS` seconds for the answer of a notification whose result (`shown`) has a
 * question and no answer yet; then `show()` again. Without a question or with an answer, at once.
 */
export async function waitedFields(
  shown: Record<string, unknown>,
  waitS: number | undefined,
  waits: AnswerWaits | undefined,
  signal: AbortSignal,
  show: () => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  if (!waitS || !waits || shown.question === undefined || shown.answer !== undefined) return shown;
  const end = await waits.wait(shown.id as string, waitS * 1000, signal);
  return { ...(end === 'full' ? shown : await show()), wait: end === 'full' ? 'busy' : end };
}
