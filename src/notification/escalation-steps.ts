/**
 * An escalation's steps (DESIGN section 11), kept in the outbox as the first send leaves:
 * after every check that can refuse or hold it (allowlist, opt-outs, approval, quiet hours,
 * caps) and before its provider call, whatever path it took (a send, a scheduled or held
 * release, an approved release). So a first send that never leaves has no steps, one that
 * leaves cannot lose them, and their delays count from when it left. Each step is the step
 * channel's call to its recipient, carrying the first send's text (saying which notification
 * it escalates) and the same question; its link, and each of its recipients (an SMS reply),
 * answers the first send's question. Steps are written under keys of their own and ids
 * derived from the first send's, so a release taken over writes none twice.
 */
import { createHash } from 'node:crypto';
import type { Ask } from '../channels/ask.js';
import type { TypedChannel } from '../channels/channel.js';
import { NotifyError } from '../core/errors.js';
import { waitingEntry } from '../store/ports/outbox.js';
import type { EscalationStep } from './escalation-policy.js';
import { messageTokens, questionRecord } from './question.js';
import type { PipelineDeps } from './send-deps.js';

/** How much of the first send's text a step carries: a forwarded page, not a copy. */
const TEXT_MAX = 1_000;

/** The first send as it leaves: its id, its call (with `escalate` and `ask`), its summary, its client. */
export interface LeavingSend {
  id: string;
  call: Readonly<Record<string, unknown>>;
  summary: { headline: string; body: string };
  client: string | null;
}

/** Step `i`'s id: the first send's time prefix (ids stay in time order) and 80 bits of a hash of the first send's id and `i`. */
function stepId(rootId: string, i: number): string {
  const hash = createHash('sha256').update(`${rootId}:${i}`).digest('hex');
  return `${rootId.slice(0, 16)}${hash.slice(0, 20)}`;
}

/**
 * Keeps each step of the policy `send.call.escalate` names, due at `at` plus its delay; does
 * nothing for a send that names none. Throws when the store fails: the send has not left, and
 * fails with it (nothing sent, no step kept to escalate a message that never went).
 */
export async function keepSteps(deps: PipelineDeps, send: LeavingSend, at: number): Promise<void> {
  const name = send.call.escalate;
  if (typeof name !== 'string') return;
  const policy = deps.config.escalations?.find((p) => p.name === name);
  if (!policy) {
    // Validated against the same policies at the call: a scheduled send outlived a change of NOTIFY_ESCALATIONS.
    deps.log.error('escalation policy no longer configured: sent without its steps', { notificationId: send.id, policy: name });
    return;
  }
  const ask = send.call.ask as Ask;
  const message = {
    subject: `Escalates ${send.id}: ${send.summary.headline}`,
    text: `Escalates ${send.id}: ${send.summary.body}`.slice(0, TEXT_MAX),
  };
  const steps = policy.steps.map((step, i) => {
    const id = stepId(send.id, i + 1);
    const channel = deps.channels.find((c) => c.name === step.via)!;
    const { call, recipients } = channel.open((typed) => stepCall(typed, step, message, ask, send.call.urgent === true));
    const due = at + step.delayMs;
    const entry = waitingEntry({
      id,
      via: step.via,
      client: send.client,
      call,
      state: 'scheduled',
      send_at: due,
      due_at: due,
      created_at: at,
      idem_key: `escalate:${send.id}:${i + 1}`,
      escalates: send.id,
    });
    return { entry, recipients };
  });
  // With their links, in one transaction: a step never carries a link the store does not know,
  // and a store that fails part way keeps none (the send fails before it leaves). Without a key
  // no link can be made (the call was refused at validation then): no token to keep.
  const key = deps.answerKey;
  const added = await deps.store.scheduleEscalation(
    questionRecord(ask, send.id, at, send.client, send.summary.headline),
    key === undefined ? [] : steps.flatMap((s) => messageTokens(key, s.entry.id, s.recipients, s.entry.id)),
    steps.map((s) => s.entry),
  );
  if (added.length > 0) deps.outbox?.wake(Math.min(...steps.map((s) => s.entry.due_at)));
  deps.log.info('escalation kept', { notificationId: send.id, policy: policy.name, steps: policy.steps.length, client: send.client });
}

/**
 * A first send sent at the call that failed (nothing left, or the provider refused it): its
 * caller is told the send failed, so its steps are cancelled, and read so at once (their claim
 * would cancel them too, reading the first send's record or outbox entry: src/store/sql/outbox.ts).
 * One that may have left (DELIVERY_UNKNOWN) keeps them: nobody has answered.
 */
export async function stopStepsOfFailedSend(deps: PipelineDeps, send: Pick<LeavingSend, 'id' | 'client'>, err: unknown): Promise<void> {
  if (err instanceof NotifyError && err.code === 'DELIVERY_UNKNOWN') return;
  try {
    await deps.store.cancelEscalation(send.id, deps.now(), { client: send.client, tool: 'send_notification' });
  } catch (e) {
    deps.log.error('steps of a failed send not cancelled', { notificationId: send.id, error: (e as Error).message });
  }
}

/** The step channel's call to the step's recipient: the forwarded text, the same question, and `urgent` as the first send had it. */
function stepCall<C, P>(
  typed: TypedChannel<C, P>,
  step: EscalationStep,
  message: { subject: string; text: string },
  ask: Ask,
  urgent: boolean,
): { call: Record<string, unknown>; recipients: string[] } {
  const forwarded = typed.forward(step.to, message) as Record<string, unknown>;
  const call = { ...forwarded, ask, ...(urgent ? { urgent: true } : {}) };
  return { call, recipients: [...typed.recipients(typed.parse(call))] };
}
