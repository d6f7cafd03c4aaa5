/**
 * A person's decision on a send awaiting approval in the operator console (NOTIFY_APPROVAL_MODE=console):
 * approve, decline, or the clock's expiry. The decision is bound to the payload hash the
 * person was shown, goes through the one transition table (./status.ts), and is a
 * compare-and-set in the store, so of two people or replicas deciding one send exactly one
 * wins. An approval puts the send in the durable outbox in the same store write (due now,
 * or at its send_at), and this process then releases it: if it dies before the provider
 * call, any process's release loop (or `notify-mcp worker`) sends it, once.
 */
import { errors, NotifyError } from '../core/errors.js';
import type { DeliveryRecord } from '../store/ports/deliveries.js';
import { waitingEntry, type OutboxEntry } from '../store/ports/outbox.js';
import { DEFAULT_APPROVAL_TTL_MS } from './approval.js';
import { releaseNow, type Released } from './outbox.js';
import type { PipelineDeps } from './pipeline.js';
import { decide } from './status.js';

/** Who decides, and what they saw: the payload hash the page showed them, and their reason. */
export interface ApprovalDecision {
  decision: 'approve' | 'decline';
  /** The operator token's client. */
  by: string;
  /** The payload_sha256 the person was shown: a send whose payload is not that one is not theirs to decide. */
  seenSha256: string;
  reason?: string;
}

export type ApprovalDecided =
  | { status: 'declined'; record: DeliveryRecord }
  /** `released`: how this process's release of it ended; undefined when another process (or a later pass) sends it. */
  | { status: 'approved'; record: DeliveryRecord; released: Released | undefined };

/** How long a send awaits approval: its own expires_at, else the configured TTL from its creation. */
function expiresAt(deps: PipelineDeps, held: DeliveryRecord): number {
  return held.approval?.expires_at ?? held.created_at + (deps.config.approval.ttlMs ?? DEFAULT_APPROVAL_TTL_MS);
}

/** Ends every send awaiting approval whose time has come (`expired`, from created_at + TTL on, as decideApproval counts); how many. */
export function expireAwaitingApproval(deps: PipelineDeps): Promise<number> {
  const now = deps.now();
  return deps.store.expirePending(now - (deps.config.approval.ttlMs ?? DEFAULT_APPROVAL_TTL_MS) + 1, now);
}

/**
 * Decides send `id`, awaiting approval. NOT_FOUND when there is none; a send no longer waiting (decided,
 * expired, never held) is INVALID_FIELD naming its state; a hash other than the payload's is
 * APPROVAL_REQUIRED (the person must look again). Nothing is sent on any refusal.
 */
export async function decideApproval(deps: PipelineDeps, id: string, d: ApprovalDecision): Promise<ApprovalDecided> {
  const held = await deps.store.getDelivery(id);
  if (!held) throw errors.notFound(`No notification has id ${id}.`, { path: '/id' });
  const now = deps.now();
  if (held.status === 'pending_approval' && now >= expiresAt(deps, held)) {
    await deps.store.decideDelivery(id, {
      from: 'pending_approval',
      status: 'expired',
      approval: { ...held.approval!, outcome: 'expired', decided_at: now },
      at: now,
    });
    throw errors.invalidField(
      `Notification ${id} expired at ${new Date(expiresAt(deps, held)).toISOString()} before anyone decided; nothing was sent.`,
      { path: '/id' },
    );
  }
  const step = decide(held.status, d.decision);
  if (!step.ok) throw errors.invalidField(`Notification ${id} cannot be decided: ${step.reason}.`, { path: '/id' });
  if (held.approval?.payload_sha256 !== d.seenSha256) throw notWhatWasSeen(id, d.seenSha256);
  if (d.decision === 'approve') {
    // What a send checks at its own time, checked again now: the recipient may have opted
    // out while the send waited, and the sending client's rate limit counts it now.
    const optedOut = await deps.store.findOptedOut({ via: held.via, recipients: held.approval.recipients ?? [] });
    if (optedOut !== undefined) {
      throw errors.recipientOptedOut(optedOut, held.via, 'approve');
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
  const decision = { from: 'pending_approval' as const, status: step.next, approval, at: now };
  const won =
    d.decision === 'approve'
      ? await deps.store.approveDelivery(id, decision, approvedEntry(held, now))
      : await deps.store.decideDelivery(id, decision);
  if (!won) {
    // The statement compared status and hash: an edit may have landed since the read above.
    const now2 = await deps.store.getDelivery(id);
    if (now2?.status === 'pending_approval') throw notWhatWasSeen(id, d.seenSha256);
    throw errors.invalidField(`Notification ${id} was decided by someone else a moment ago; reload it to see how.`, { path: '/id' });
  }
  const record: DeliveryRecord = { ...held, status: step.next, approval, status_updated_at: now };
  const log = deps.log.child({ notificationId: id, via: held.via, client: held.client });
  log.info(d.decision === 'approve' ? 'approval approved in the console' : 'approval declined in the console', {
    by: d.by,
    ...(d.reason ? { reason: d.reason } : {}),
  });
  if (d.decision === 'decline') return { status: 'declined', record };
  // The approval stands whatever this release does: the outbox keeps the send until one is made.
  const released = await releaseNow(deps, id).catch((err: unknown) => {
    log.warn('approved send left in the outbox for the next release', { error: (err as Error).message });
    deps.outbox?.wake(deps.now());
    return undefined;
  });
  return { status: 'approved', record: (await deps.store.getDelivery(id).catch(() => null)) ?? record, released };
}

function notWhatWasSeen(id: string, seenSha256: string): NotifyError {
  return errors.approvalRequired(
    `The message you were shown (sha256 ${seenSha256.slice(0, 16)}…) is not the one held under ${id}; nothing was decided. Reload it and decide on what it says now.`,
    { path: '/payload_sha256' },
  );
}

/** The outbox entry an approval writes with its decision: the approved send, due now, under its own id. */
function approvedEntry(held: DeliveryRecord, now: number): OutboxEntry {
  return waitingEntry({
    id: held.id,
    via: held.via,
    client: held.client,
    // Nothing to build from: its payload is the one the person approved, on its delivery row.
    call: {},
    approved_sha256: held.approval!.payload_sha256,
    state: 'scheduled',
    send_at: null,
    due_at: now,
    created_at: now,
  });
}
