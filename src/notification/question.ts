/**
 * Keeps the question of a send that asks (DESIGN section 11): its choices, its life, and the
 * hash of the token its message's link carries. The token is derived from the id (the store's
 * key; src/core/answer-token.ts), so what is kept matches what every build of the payload puts
 * in the message, whenever it leaves.
 */
import { questionOf, type Ask } from '../channels/ask.js';
import { answerToken, tokenSha256 } from '../core/answer-token.js';
import type { AnswersPort } from '../store/ports/answers.js';

/** The part of a send's answer this needs: its id. */
export async function keepQuestion(
  store: Pick<AnswersPort, 'recordQuestion'>,
  answerKey: string | undefined,
  value: Readonly<Record<string, unknown>>,
  sent: { id: string; accepted_at: string },
  client: string | null,
): Promise<void> {
  const asked = value.ask as Ask | undefined;
  if (asked === undefined) return;
  // The call was validated with links possible, so the app holds a key: without one this is a bug.
  if (answerKey === undefined) throw new Error(`send ${sent.id} asks, but no answer key was given to the send path`);
  const { choices, expires_in_s } = questionOf(asked);
  // One link for the whole message (recipient ''): every channel sends one message to all its recipients.
  const tokens = [{ sha256: tokenSha256(answerToken(answerKey, sent.id, '')), recipient: '' }];
  await store.recordQuestion({ notification_id: sent.id, choices, expires_in_s, created_at: Date.parse(sent.accepted_at), client }, tokens);
}
