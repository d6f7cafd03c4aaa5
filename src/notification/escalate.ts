/**
 * The escalate use case (DESIGN section 11, Escalation): a send that names a policy
 * (`escalate`) asks a question (an acknowledgement unless it asks its own), is sent as any
 * send (the first send), and each of the policy's steps is put in the outbox, due at the first
 * send's time plus its delay, as the step channel's call to its recipient carrying the same
 * text (saying which notification it escalates) and the same question. A step leaves through
 * the outbox's release, so the allowlist, opt-outs, caps, quiet hours and approval apply to it
 * as to any send; an answer cancels the steps still waiting in its own transaction, and a
 * step's claim reads the answer in its own statement (src/store/ports/outbox.ts), so no step
 * leaves after an answer committed. A step's link answers the first send's question: its
 * token is kept pointing there, before the step can leave.
 */
import { questionOf, type Ask } from '../channels/ask.js';
import type { TypedChannel } from '../channels/channel.js';
import { answerToken, tokenSha256 } from '../core/answer-token.js';
import { newNotificationId } from '../core/ids.js';
import { waitingEntry } from '../store/ports/outbox.js';
import { isApprovalAsk, type ApprovalAsk } from './approval.js';
import type { EscalationPolicy, EscalationStep } from './escalation-policy.js';
import { sendOrAsk, type PipelineDeps, type SendOptions, type SendResult } from './pipeline.js';

/** A send's deps: the outbox keeps the steps, the question port their tokens. */
export type EscalateDeps = PipelineDeps;

/** How much of the first send's text a step carries: a forwarded page, not a copy. */
const TEXT_MAX = 1_000;

/**
 * Sends `value` as channel `via`'s call; when it names a policy, the first send and then its
 * steps. A question for the client (approval) ends the call with nothing sent and no step kept.
 */
export async function sendEscalating(
  deps: EscalateDeps,
  via: string,
  value: Readonly<Record<string, unknown>>,
  opts: SendOptions,
): Promise<SendResult | ApprovalAsk> {
  const name = value.escalate;
  if (typeof name !== 'string') return sendOrAsk(deps, via, value, opts);
  const policy = deps.config.escalations?.find((p) => p.name === name);
  // The branch's enum is built from the same policies: a name not among them is a bug.
  if (!policy) throw new Error(`escalate names policy "${name}", which is not configured`);
  // escalate implies an acknowledgement; kept in the call so a retry's payload hash matches.
  const asked = value.ask === undefined ? { ...value, ask: {} } : value;
  const first = await sendOrAsk(deps, via, asked, opts);
  if (isApprovalAsk(first)) return first;
  // The first send has left: a failure here must not read as a failed send (a retry without
  // a key would send it twice). Logged; a retry under the same key replays and keeps them.
  await keepSteps(deps, via, asked, first, policy, opts.client).catch((err: unknown) =>
    deps.log.error('escalation steps not kept', { notificationId: first.id, policy: policy.name, error: (err as Error).message }),
  );
  return first;
}

/** When the first send leaves (or left): its steps' delays count from here. */
function firstSendAt(first: SendResult): number {
  const later = first.release_at ?? first.send_at;
  return typeof later === 'string' ? Date.parse(later) : Date.parse(first.accepted_at);
}

/** Each step of `policy` in the outbox, once: a replayed first send finds its steps kept (their keys are the first send's). */
async function keepSteps(
  deps: EscalateDeps,
  via: string,
  value: Readonly<Record<string, unknown>>,
  first: SendResult,
  policy: EscalationPolicy,
  client: string | null,
): Promise<void> {
  const root = first.id;
  if ((await deps.store.escalationSteps(root)).length >= policy.steps.length) return;
  const channel = deps.channels.find((c) => c.name === via)!;
  const summary = channel.open((typed) => typed.summary(typed.parse(value)));
  const text = `Escalates ${root}: ${summary.body}`.slice(0, TEXT_MAX);
  const message = { subject: `Escalates ${root}: ${summary.headline}`, text };
  const ask = value.ask as Ask;
  const base = firstSendAt(first);
  for (const [i, step] of policy.steps.entries()) {
    const stepChannel = deps.channels.find((c) => c.name === step.via)!;
    const call = stepChannel.open((typed) => stepCall(typed, step, message, ask, value.urgent === true));
    const due = base + step.delayMs;
    const entry = waitingEntry({
      id: newNotificationId(),
      via: step.via,
      client,
      call,
      state: 'scheduled',
      send_at: due,
      due_at: due,
      created_at: deps.now(),
      idem_key: `escalate:${root}:${i + 1}`,
      escalates: root,
    });
    await keepStepToken(deps, entry.id, root, summary.headline, ask, base, client);
    const written = await deps.store.scheduleSend(entry);
    if (written.kind === 'existing') await keepStepToken(deps, written.entry.id, root, summary.headline, ask, base, client);
    else deps.outbox?.wake(due);
  }
  deps.log.info('escalation kept', { notificationId: root, policy: policy.name, steps: policy.steps.length, client });
}

/** The step channel's call to the step's recipient: the forwarded text, the same question, and `urgent` as the first send had it. */
function stepCall<C, P>(
  typed: TypedChannel<C, P>,
  step: EscalationStep,
  message: { subject: string; text: string },
  ask: Ask,
  urgent: boolean,
): Record<string, unknown> {
  const forwarded = typed.forward(step.to, message) as Record<string, unknown>;
  return { ...forwarded, ask, ...(urgent ? { urgent: true } : {}) };
}

/** The step's link token, kept as the first send's question's: whichever step is answered answers the escalation. */
async function keepStepToken(
  deps: EscalateDeps,
  stepId: string,
  root: string,
  prompt: string,
  ask: Ask,
  at: number,
  client: string | null,
): Promise<void> {
  // Without a key no link can be made (the call was refused at validation then): nothing to keep.
  if (deps.answerKey === undefined) return;
  const { choices, expires_in_s } = questionOf(ask);
  const token = { sha256: tokenSha256(answerToken(deps.answerKey, stepId, '')), recipient: stepId };
  // The first send's question is kept already (its send kept it before it left): this adds the token only.
  await deps.store.recordQuestion({ notification_id: root, prompt: prompt.slice(0, 300), choices, expires_in_s, created_at: at, client }, [
    token,
  ]);
}
