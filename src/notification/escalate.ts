/**
 * The escalate use case (DESIGN section 11, Escalation): a send that names a policy
 * (`escalate`) asks a question (an acknowledgement unless it asks its own) and is sent as any
 * send; its steps are kept as it leaves (./escalation-steps.ts), on whatever path it leaves.
 * A step leaves through the outbox's release, so the allowlist, opt-outs, caps, quiet hours
 * and approval apply to it as to any send; an answer cancels the steps still waiting in its
 * own transaction, and a step's claim reads the answer in its own statement
 * (src/store/ports/outbox.ts), so no step leaves after an answer committed.
 */
import type { ApprovalAsk } from './approval.js';
import { sendOrAsk, type PipelineDeps, type SendOptions, type SendResult } from './pipeline.js';

/**
 * Sends `value` as channel `via`'s call; one that names a policy asks at least for an
 * acknowledgement. A question for the client (approval) ends the call with nothing sent.
 */
export async function sendEscalating(
  deps: PipelineDeps,
  via: string,
  value: Readonly<Record<string, unknown>>,
  opts: SendOptions,
): Promise<SendResult | ApprovalAsk> {
  const name = value.escalate;
  if (typeof name !== 'string') return sendOrAsk(deps, via, value, opts);
  // The branch's enum is built from the same policies: a name not among them is a bug.
  if (!deps.config.escalations?.some((p) => p.name === name)) throw new Error(`escalate names policy "${name}", which is not configured`);
  // Kept in the call (and so in a scheduled or held send's), so a retry's payload hash matches.
  return sendOrAsk(deps, via, value.ask === undefined ? { ...value, ask: {} } : value, opts);
}
