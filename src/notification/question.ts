/**
 * Keeps the question of a send that asks (DESIGN section 11): its choices, its life, and the
 * hash of the token its message's link carries. The token is derived from the id (the store's
 * key; src/core/answer-token.ts), so what is kept matches what every build of the payload puts
 * in the message, whenever it leaves.
 */
import { questionOf, type Ask } from '../channels/ask.js';
import { answerToken, tokenSha256 } from '../core/answer-token.js';
import type { ConnectedChannel } from '../channels/channel.js';
import type { AnswersPort, QuestionRecord, QuestionToken } from '../store/ports/answers.js';
import type { PipelineDeps } from './send-deps.js';

/** How much of the subject or first line the answer page shows. */
const PROMPT_MAX = 300;

/** A send's answer that says its message has not left yet. */
export const WAITING: ReadonlySet<string> = new Set(['scheduled', 'held', 'pending_approval']);

/**
 * `value`: the call; `id` and `at`: the notification and when it was taken; `prompt`: its subject or
 * first line, for the answer page; `recipients`: whom it asks (an SMS reply is matched to its number).
 */
export async function keepQuestion(
  store: Pick<AnswersPort, 'recordQuestion'>,
  answerKey: string | undefined,
  value: Readonly<Record<string, unknown>>,
  id: string,
  at: number,
  client: string | null,
  prompt: string,
  recipients: readonly string[],
): Promise<void> {
  const asked = value.ask as Ask | undefined;
  if (asked === undefined) return;
  // The call was validated with links possible, so the app holds a key: without one this is a bug.
  if (answerKey === undefined) throw new Error(`send ${id} asks, but no answer key was given to the send path`);
  await store.recordQuestion(questionRecord(asked, id, at, client, prompt), messageTokens(answerKey, id, recipients));
}

/** The question `ask` makes of notification `id`, as kept: `prompt` (its subject or first line) cut for the answer page. */
export function questionRecord(ask: Ask, id: string, at: number, client: string | null, prompt: string): Omit<QuestionRecord, 'answer'> {
  const { choices, expires_in_s } = questionOf(ask);
  return { notification_id: id, prompt: prompt.slice(0, PROMPT_MAX), choices, expires_in_s, created_at: at, client };
}

/**
 * The token hashes of message `messageId`: one link for the whole message (recipient ''; every
 * channel sends one message to all its recipients), and a row per recipient (their tokens
 * never leave): who was asked, so an SMS reply finds its question. `sent_in` when the message
 * is not the question's own (an escalation step).
 */
export function messageTokens(answerKey: string, messageId: string, recipients: readonly string[], sentIn?: string): QuestionToken[] {
  return ['', ...recipients].map((recipient) => ({
    sha256: tokenSha256(answerToken(answerKey, messageId, recipient)),
    recipient,
    ...(sentIn !== undefined ? { sent_in: sentIn } : {}),
  }));
}

/**
 * The question of a send that waits, kept at the call so its link answers "not sent yet".
 * The waiting send is already written, so a failure here must not fail the call (a caller
 * retrying would schedule it twice): it is logged, and the release keeps the question anyway
 * before the message leaves.
 */
export async function keepWaitingQuestion(
  deps: PipelineDeps,
  channel: ConnectedChannel,
  value: Readonly<Record<string, unknown>>,
  sent: { id: string; accepted_at: string },
  opts: { client: string | null },
): Promise<void> {
  try {
    const { prompt, recipients } = channel.open((typed) => {
      const call = typed.parse(value);
      return { prompt: typed.summary(call).headline, recipients: typed.recipients(call) };
    });
    await keepQuestion(deps.store, deps.answerKey, value, sent.id, Date.parse(sent.accepted_at), opts.client, prompt, recipients);
  } catch (err) {
    deps.log.warn('question of a waiting send not kept; its release keeps it', { id: sent.id, error: String(err) });
  }
}
