/**
 * Editing a notification (edit_notification, and nothing else): the text (and blocks) of a
 * Slack post the caller sent, through chat.update, or of any notification not yet sent,
 * under the same rules as a send: the fields validate as send_notification's, the allowlist
 * is asked again, the approval rules apply to the edited message (./approval.ts approveEdit),
 * broadcasts are screened again (the channel builds the payload), and an edit of what a
 * person approved is not made behind their back. A send still waiting in the outbox
 * (scheduled, held) waits with the new call; one waiting for a person (pending_approval, or
 * approved and not yet released) waits for them again with the new payload and hash, so a
 * decision on the old one is refused. The record keeps the payload as it now stands.
 */
import { errors, type NotifyError } from '../core/errors.js';
import type { DeliveryRecord } from '../store/ports/deliveries.js';
import { approveEdit, isApprovalAsk, payloadSha256, type ApprovalAsk } from './approval.js';
import { amendContext, amendFailure, channelOf, ownNotification, type Caller } from './own.js';
import { checkAllowed } from './recipient-policy.js';
import type { PipelineDeps } from './send-deps.js';
import { advance } from './status.js';
import type { DeliveryStatus } from '../store/ports/deliveries.js';

/** What an edit answers: the notification, where it now stands, and when it was edited. */
export interface Edited {
  id: string;
  via: string;
  status: DeliveryStatus;
  edited_at: string;
}

export type Change = { text: string; blocks?: unknown[] | undefined };

/**
 * Edits notification `id` as `caller` asks, or answers with the question a person must answer
 * first (an edited post the approval rules cover); throws a NotifyError saying why when it cannot be.
 */
export async function editNotification(deps: PipelineDeps, caller: Caller, id: string, change: Change): Promise<Edited | ApprovalAsk> {
  const waiting = await editWaiting(deps, caller, id, change);
  if (waiting) return waiting;
  const record = await ownNotification(deps.store, id, caller);
  if (record.status === 'pending_approval' || record.status === 'approved') return editHeld(deps, record, change);
  const step = advance(record.status, 'edited');
  if (!step.ok) throw errors.invalidField(`Notification ${record.id} cannot be edited: ${step.reason}.`, { path: '/id', via: record.via });
  const posted = await editPosted(deps, caller, record, change);
  if (isApprovalAsk(posted)) return posted;
  const { payload } = posted;
  const at = deps.now();
  const written = await deps.store.amendDelivery(record.id, {
    from: record.status,
    status: step.next,
    payload,
    provider_status: 'edited',
    at,
    by: { client: caller.client, tool: 'edit_notification' },
  });
  if (!written)
    throw errors.invalidField(`Notification ${record.id} changed while it was being edited; read it with get_notification.`, {
      path: '/id',
    });
  return { id: record.id, via: record.via, status: step.next, edited_at: new Date(at).toISOString() };
}

/**
 * A posted message: the edited call validated, asked of the allowlist and the approval rules,
 * built, and handed to the provider's edit; the new payload, or the question a person must answer first.
 */
async function editPosted(
  deps: PipelineDeps,
  caller: Caller,
  record: DeliveryRecord,
  change: Change,
): Promise<{ kind: 'edited'; payload: unknown } | ApprovalAsk> {
  const question = await deps.store.getQuestion(record.id);
  return channelOf(record, deps.channels, async (channel) => {
    const edited = channel.editCall(record.payload, change);
    // A post that asked keeps asking: the edit carries the same question, so the same link (its id's).
    const raw =
      question && edited ? { ...(edited as object), ask: { choices: question.choices, expires_in_s: question.expires_in_s } } : edited;
    if (raw === undefined) {
      throw errors.alreadySent(
        `Notification ${record.id} is ${record.via}, which cannot be changed once handed over. Send a correction instead.`,
        { path: '/id', via: record.via },
      );
    }
    // A person approved the post as it was: an edit would change what they approved.
    if (record.approval?.outcome === 'approved') {
      throw errors.approvalRequired(
        `A person approved notification ${record.id} as it was; an edit would change what they approved. Send a new notification instead, which is asked again.`,
        { via: record.via },
      );
    }
    const parsed = channel.branchOf(raw);
    if (!parsed.success) throw firstIssue(parsed.error.issues, record.via);
    const call = parsed.data;
    checkAllowed(channel, channel.recipients(call), call, 'nothing was changed');
    const built = await channel.buildPayload(call, record.id, deps.config.sendBudgetMs / 2, record.created_at);
    // The edited message meets the approval rules a send of it would meet.
    const approval = await approveEdit(deps, channel, call, built.payload, record.id, caller.approval);
    if (approval.kind === 'ask') return approval;
    if (channel.live && record.provider !== 'dry-run') {
      if (!channel.provider.edit || record.provider_message_id === null)
        throw errors.alreadySent(`Notification ${record.id} cannot be edited at its provider.`, { via: record.via });
      try {
        const posted = {
          payload: record.payload as never,
          providerMessageId: record.provider_message_id,
          conversation: record.provider_conversation ?? undefined,
        };
        await channel.provider.edit(posted, built.payload, amendContext(record.id, deps.config.sendBudgetMs, caller.signal));
      } catch (err) {
        throw amendFailure(err, record.id, record.via, 'edit');
      }
    }
    return { kind: 'edited' as const, payload: built.payload };
  });
}

/** `call` changed by `change` through its channel, validated as a send and asked of the allowlist again. */
async function editedCall(
  via: { via: string; id: string },
  base: Record<string, unknown>,
  change: Change,
  deps: PipelineDeps,
  build: boolean,
) {
  return channelOf(via, deps.channels, async (channel) => {
    const raw = channel.editWaiting(channel.parse(base), change);
    if (raw === undefined)
      throw errors.invalidField(
        `Notification ${via.id} is ${via.via}, whose sends cannot be edited before they leave; retract it and send anew.`,
        { path: '/id', via: via.via },
      );
    const parsed = channel.branchOf(raw);
    if (!parsed.success) throw firstIssue(parsed.error.issues, via.via);
    const recipients = channel.recipients(parsed.data);
    checkAllowed(channel, recipients, parsed.data, 'nothing was changed');
    const call = parsed.data as Record<string, unknown>;
    // What the person will be shown: built now, as a send's approval builds it.
    const payload = build ? (await channel.buildPayload(parsed.data, via.id, deps.config.sendBudgetMs / 2, deps.now())).payload : undefined;
    return { call, payload, recipients };
  });
}

/** A send still waiting in the outbox, with no record yet: its call replaced while it waits. Undefined when the id names none of the caller's. */
async function editWaiting(deps: PipelineDeps, caller: Caller, id: string, change: Change): Promise<Edited | undefined> {
  if (await deps.store.getDelivery(id)) return undefined;
  const entry = await deps.store.getOutboxEntry(id);
  if (!entry || !(caller.operator || entry.client === caller.client)) return undefined;
  const leftAlready = () =>
    errors.alreadySent(`Notification ${id} is no longer waiting (${entry.state}); it cannot be edited. Read it with get_notification.`, {
      path: '/id',
      via: entry.via,
    });
  if (entry.state !== 'scheduled' && entry.state !== 'held') throw leftAlready();
  const { call } = await editedCall(entry, entry.call, change, deps, false);
  // Of this edit and a release claiming it, one wins: a release that won sends the old call.
  const at = deps.now();
  if (!(await deps.store.editWaiting(id, call, at))) throw leftAlready();
  return { id, via: entry.via, status: entry.state, edited_at: new Date(at).toISOString() };
}

/**
 * A send waiting for a person, or approved and not yet released: rebuilt with the change and
 * put before a person again (`pending_approval`, with the new payload and hash). An approved
 * one is first taken back from the outbox; if its release claimed it first, it has left.
 */
async function editHeld(deps: PipelineDeps, record: DeliveryRecord, change: Change): Promise<Edited> {
  const approval = record.approval;
  if (!approval?.call)
    throw errors.invalidField(
      `Notification ${record.id} was held without its call, so it cannot be rebuilt; decline or retract it and send anew.`,
      { path: '/id', via: record.via },
    );
  const { call, payload, recipients } = await editedCall(record, approval.call, change, deps, true);
  const at = deps.now();
  const { decided_by: _by, decided_at: _at, reason: _reason, ...rest } = approval;
  const revision = {
    payload,
    approval: { ...rest, outcome: 'pending' as const, payload_sha256: payloadSha256(payload), recipients, call },
    at,
  };
  const from = record.status as 'pending_approval' | 'approved';
  // An approved one: its entry cancelled and its row asked again in one write, or neither.
  const revised =
    from === 'approved'
      ? await deps.store.takeBackApproved(record.id, { revise: revision }, at)
      : await deps.store.reviseHeld(record.id, { ...revision, from });
  if (!revised) throw await notRevised(deps, record);
  deps.log.info(from === 'approved' ? 'approved send edited: asked again' : 'held send edited', {
    notificationId: record.id,
    via: record.via,
  });
  return { id: record.id, via: record.via, status: 'pending_approval', edited_at: new Date(at).toISOString() };
}

/** An edited call's first problem, as INVALID_FIELD at its field. */
function firstIssue(issues: readonly { path: readonly PropertyKey[]; message: string }[], via: string): NotifyError {
  const path = `/${issues[0]!.path.map(String).join('/')}`;
  return errors.invalidField(`Fix ${path}: ${issues[0]!.message}`, { path, via });
}

/** Why an edit of a held send wrote nothing: an approved one's release took it first, or a decision came first. */
async function notRevised(deps: PipelineDeps, record: DeliveryRecord): Promise<NotifyError> {
  const entry = record.status === 'approved' ? await deps.store.getOutboxEntry(record.id) : null;
  if (entry && entry.state !== 'scheduled' && entry.state !== 'held')
    return errors.alreadySent(approvedGone(record.id, entry.state), { path: '/id', via: record.via });
  return errors.invalidField(`Notification ${record.id} was decided while it was being edited; read it with get_notification.`, {
    path: '/id',
  });
}

/** Why an approved send can no longer be edited: its release took it first (`state`: its outbox entry's). */
function approvedGone(id: string, state: string | undefined): string {
  if (state === 'releasing')
    return `Notification ${id} was approved and is being released now (its provider call may be under way); it cannot be edited while it is. Read it with get_notification: if it left, send a correction; if the release ended without sending (a fault), it waits approved again and can be edited.`;
  if (state === undefined || state === 'released') return `Notification ${id} was approved and has left; send a correction instead.`;
  return `Notification ${id} was approved and its release ended ${state}; it can no longer be edited. Read it with get_notification.`;
}
