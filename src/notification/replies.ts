/**
 * Answers that come back in the channel itself (DESIGN section 11): a Slack button click, an
 * SMS reply code, and an SMS opt-out. The channel has verified and read the request
 * (src/channels/inbound.ts); here it is mapped to a stored question and answered through the
 * answer use case (./answer.ts), so the first answer wins, once, with its audit entry. An
 * opt-out is recorded and never read as an answer. What changes nothing is logged with why.
 */
import type { InboundReply, ReplyOutcome } from '../channels/inbound.js';
import type { Logger } from '../core/log.js';
import type { AnswersPort } from '../store/ports/answers.js';
import type { ContactsPort } from '../store/ports/contacts.js';
import { answerQuestion, questionState, type AnswerPorts, type AnswerResult } from './answer.js';

export interface ReplyDeps {
  store: AnswerPorts & Pick<AnswersPort, 'unansweredQuestionsTo'> & Pick<ContactsPort, 'addOptOut'>;
  now: () => number;
  log: Logger;
}

/** What a reply did: answered (or found an answer standing), opted out, or nothing, with why. */
export type ReplyTaken =
  | { kind: 'answered'; outcome: ReplyOutcome & { kind: 'recorded' | 'answered' }; id: string }
  | { kind: 'opted_out' }
  | { kind: 'ignored'; why: string; id?: string };

/** Unanswered questions looked at per reply: a number is rarely asked more than a few at once. */
const CANDIDATES = 20;

/** The result in the words the person is told. */
function outcomeOf(result: AnswerResult): ReplyOutcome {
  switch (result.kind) {
    case 'recorded':
    case 'answered':
      return { kind: result.kind, choice: result.answer.choice, by: result.answer.by, via: result.answer.via };
    case 'expired':
      return { kind: 'refused', why: `This question expired at ${new Date(result.expires_at).toISOString()}; nothing was recorded.` };
    case 'not_offered':
      return { kind: 'refused', why: `That is not one of this question's choices (${result.choices.join(', ')}); nothing was recorded.` };
    case 'not_sent':
      return { kind: 'refused', why: 'This message has not been sent (it may never be); nothing was recorded.' };
    // `live` comes only from the shell's dry-run answer, never from a reply.
    case 'live':
    case 'unknown':
      return { kind: 'refused', why: 'This question is not known here; nothing was recorded.' };
  }
}

function taken(outcome: ReplyOutcome, id: string | undefined): ReplyTaken {
  if (outcome.kind === 'refused')
    return id === undefined ? { kind: 'ignored', why: outcome.why } : { kind: 'ignored', why: outcome.why, id };
  return { kind: 'answered', outcome, id: id! };
}

/** A click on a button: the token names the question, the position names the choice in the stored question. */
async function takeChoice(deps: ReplyDeps, via: string, reply: Extract<InboundReply, { kind: 'choice' }>): Promise<ReplyTaken> {
  const state = await questionState(deps.store, { token: reply.token }, deps.now());
  // The button's position is read against the stored choices, never taken as a choice itself.
  const choice = state.kind === 'unknown' ? undefined : state.question.choices[reply.index];
  const wrongChannel = state.kind === 'open' && state.record.via !== via;
  const result: AnswerResult =
    state.kind === 'unknown' || wrongChannel
      ? { kind: 'unknown' }
      : choice === undefined
        ? { kind: 'not_offered', id: state.question.notification_id, choices: state.question.choices }
        : await answerQuestion(deps, { token: reply.token }, choice, reply.by, via);
  const outcome = outcomeOf(result);
  try {
    await reply.respond(outcome);
  } catch (err) {
    deps.log.warn('answer taken, but the message could not be updated', { via, error: err instanceof Error ? err.message : String(err) });
  }
  return taken(outcome, 'id' in result ? result.id : undefined);
}

/** A reply code: it answers the newest open question this channel sent to that number. */
async function takeCode(deps: ReplyDeps, via: string, reply: Extract<InboundReply, { kind: 'code' }>): Promise<ReplyTaken> {
  if (reply.code === null) return { kind: 'ignored', why: 'the reply is not a reply code' };
  const now = deps.now();
  const candidates = await deps.store.unansweredQuestionsTo(reply.from, CANDIDATES);
  for (const question of candidates) {
    // The message that went to this number: the first send, or an escalation step.
    const target = { id: question.notification_id, ...(question.sent_in !== undefined ? { sent_in: question.sent_in } : {}) };
    const state = await questionState(deps.store, target, now);
    if (state.kind !== 'open' || state.record.via !== via) continue;
    const id = question.notification_id;
    const choice = question.choices[reply.code - 1];
    if (choice === undefined) return { kind: 'ignored', why: `code ${reply.code} is not offered (1 to ${question.choices.length})`, id };
    return taken(outcomeOf(await answerQuestion(deps, target, choice, reply.from, via)), id);
  }
  // Said apart for the log: a number never asked is not the same as one whose questions ran out.
  return candidates.length === 0
    ? { kind: 'ignored', why: 'no open question was sent to this number (none asked, or all answered)' }
    : { kind: 'ignored', why: 'no open question was sent to this number (those unanswered have expired or not left yet)' };
}

/** Acts on a verified reply on channel `via`, and logs what it did (never the number). */
export async function takeReply(deps: ReplyDeps, via: string, reply: InboundReply): Promise<ReplyTaken> {
  let result: ReplyTaken;
  if (reply.kind === 'opt_out') {
    await deps.store.addOptOut(via, reply.from, deps.now());
    result = { kind: 'opted_out' };
  } else result = reply.kind === 'choice' ? await takeChoice(deps, via, reply) : await takeCode(deps, via, reply);
  const fields = { via, ...('id' in result && result.id ? { notificationId: result.id } : {}) };
  if (result.kind === 'answered')
    deps.log.info(`reply ${result.outcome.kind === 'recorded' ? 'recorded as the answer' : 'came after the answer'}`, fields);
  else if (result.kind === 'opted_out')
    deps.log.info('reply opted out: nothing more goes to this recipient on this channel', {
      ...fields,
      word: (reply as { word: string }).word,
    });
  else deps.log.info('reply changed nothing', { ...fields, why: result.why });
  return result;
}
