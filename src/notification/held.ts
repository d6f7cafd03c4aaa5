/**
 * A person's decision on a send held for the operator console (NOTIFY_APPROVAL_MODE=console):
 * approve, decline, or the clock's expiry. The decision is bound to the payload hash the
 * person was shown, goes through the one transition table (./status.ts), and is a
 * compare-and-set in the store, so of two people or replicas deciding one send exactly one
 * wins, and only the winner of an approval sends it.
 */
import { NotifyError } from '../core/errors.js';
import type { DeliveryRecord } from '../store/types.js';
import { DEFAULT_APPROVAL_TTL_MS } from './approval.js';
import { releaseApproved, type PipelineDeps, type SendResult } from './pipeline.js';
import { decide } from './status.js';

/** Who decides, and what they saw: the payload hash the page showed them, and their reason. */
export interface HeldDecision {
  decision: 'approve' | 'decline';
  /** The operator token's client. */
  by: string;
  /** The payload_sha256 the person was shown: a send whose payload is not that one is not theirs to decide. */
  seenSha256: string;
  reason?: string;
}

export type HeldOutcome =
  | { status: 'declined'; record: DeliveryRecord }
  | { status: 'approved'; record: DeliveryRecord; result: SendResult };

/** How long a held send waits: its own expires_at, else the configured TTL from its creation. */
function expiresAt(deps: PipelineDeps, held: DeliveryRecord): number {
  return held.approval?.expires_at ?? held.created_at + (deps.config.approval.ttlMs ?? DEFAULT_APPROVAL_TTL_MS);
}

/** Ends every held send whose time has come (`expired`, from created_at + TTL on, as decideHeld counts); how many. */
export function expireHeld(deps: PipelineDeps): Promise<number> {
  const now = deps.now();
  return deps.store.expirePending(now - (deps.config.approval.ttlMs ?? DEFAULT_APPROVAL_TTL_MS) + 1, now);
}

/**
 * Decides held send `id`. NOT_FOUND when there is none; a send no longer waiting (decided,
 * expired, never held) is INVALID_FIELD naming its state; a hash other than the payload's is
 * APPROVAL_REQUIRED (the person must look again). Nothing is sent on any refusal.
 */
export async function decideHeld(deps: PipelineDeps, id: string, d: HeldDecision): Promise<HeldOutcome> {
  const held = await deps.store.getDelivery(id);
  if (!held) throw new NotifyError('NOT_FOUND', `No notification has id ${id}.`, { path: '/id' });
  const now = deps.now();
  if (held.status === 'pending_approval' && now >= expiresAt(deps, held)) {
    await deps.store.decideDelivery(id, { from: 'pending_approval', status: 'expired', approval: { ...held.approval!, outcome: 'expired', decided_at: now }, at: now });
    throw new NotifyError('INVALID_FIELD', `Notification ${id} expired at ${new Date(expiresAt(deps, held)).toISOString()} before anyone decided; nothing was sent.`, { path: '/id' });
  }
  const step = decide(held.status, d.decision);
  if (!step.ok) throw new NotifyError('INVALID_FIELD', `Notification ${id} cannot be decided: ${step.reason}.`, { path: '/id' });
  if (held.approval?.payload_sha256 !== d.seenSha256) {
    throw new NotifyError(
      'APPROVAL_REQUIRED',
      `The message you were shown (sha256 ${d.seenSha256.slice(0, 16)}…) is not the one held under ${id}; nothing was decided. Reload it and decide on what it says now.`,
      { path: '/payload_sha256' },
    );
  }
  if (d.decision === 'approve') {
    // What a send checks at its own time, checked again now: the recipient may have opted
    // out while the send waited, and the sending client's rate limit counts it now.
    const optedOut = await deps.store.findOptedOut({ via: held.via, recipients: held.approval.recipients ?? [] });
    if (optedOut !== undefined) {
      throw new NotifyError('RECIPIENT_OPTED_OUT', `${optedOut} has opted out (replied STOP) since this send was held; approving cannot send it. Decline it.`, { via: held.via });
    }
    await deps.rateGate?.check(held.client, held.via, now);
  }
  const approval = {
    ...held.approval,
    outcome: d.decision === 'approve' ? ('approved' as const) : ('declined' as const),
    decided_by: d.by,
    decided_at: now,
    ...(d.reason ? { reason: d.reason } : {}),
  };
  const won = await deps.store.decideDelivery(id, { from: 'pending_approval', status: step.next, approval, at: now });
  if (!won) throw new NotifyError('INVALID_FIELD', `Notification ${id} was decided by someone else a moment ago; reload it to see how.`, { path: '/id' });
  const record: DeliveryRecord = { ...held, status: step.next, approval, status_updated_at: now };
  const log = deps.log.child({ notificationId: id, via: held.via, client: held.client });
  log.info(d.decision === 'approve' ? 'approval approved in the console' : 'approval declined in the console', { by: d.by, ...(d.reason ? { reason: d.reason } : {}) });
  if (d.decision === 'decline') return { status: 'declined', record };
  const result = await releaseApproved(deps, record);
  return { status: 'approved', record: (await deps.store.getDelivery(id)) ?? record, result };
}
