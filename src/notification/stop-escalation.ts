/**
 * Stopping an escalation (DESIGN section 11): the steps of a first send still waiting are
 * cancelled in one statement, so of a stop and a step's release racing, each step goes to
 * one. Run by retract_notification on the first send and by the console's Stop button.
 */
import type { Logger } from '../core/log.js';
import type { AuditActor } from '../store/ports/audit.js';
import type { OutboxPort } from '../store/ports/outbox.js';

/** The ids of the steps this call cancelled (none when the send escalates nothing, or nothing was left waiting). */
export async function stopEscalation(
  deps: { store: Pick<OutboxPort, 'cancelEscalation'>; now: () => number; log: Logger },
  rootId: string,
  by: AuditActor,
): Promise<string[]> {
  const cancelled = await deps.store.cancelEscalation(rootId, deps.now(), by);
  if (cancelled.length > 0) deps.log.info('escalation stopped', { notificationId: rootId, steps: cancelled.length, by: by.client });
  return cancelled;
}
