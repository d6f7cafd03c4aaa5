/**
 * The release of a send a person approved in the console: the use case the outbox runs for
 * an approved entry (./outbox.ts), sending the stored payload the person saw, after the
 * checks every send meets as it leaves.
 */
import type { TypedChannel } from '../channels/channel.js';
import { errors, NotifyError } from '../core/errors.js';
import { payloadSha256 } from './approval.js';
import { deliver, heldByQuietHours, newRecord, sendResult, storeUnavailable, type Prepared, type Send } from './deliver.js';
import { approvedReleaseClaim, scopedKey } from './claim-keys.js';
import { claimKey, IDEMPOTENCY_TTL_MS, type ClaimHandle } from './idempotency.js';
import { keepSteps } from './escalation-steps.js';
import { keepQuestion } from './question.js';
import { checkAllowed } from './recipient-policy.js';
import { quietRelease } from './schedule.js';
import { budgetLeft } from './send-budget.js';
import type { DeliveryRecord } from '../store/ports/deliveries.js';
import type { PipelineDeps, SendOptions, SendResult } from './send-deps.js';

/** Refusals at an approved send's release that end it: its row, still `approved`, records the refusal. */
const REFUSED_AT_RELEASE: ReadonlySet<string> = new Set(['RECIPIENT_NOT_ALLOWED', 'RECIPIENT_OPTED_OUT', 'APPROVAL_REQUIRED']);

/**
 * Writes how an approved send's release ended onto its row when no answer waits on the write
 * (a refusal, an abandoned release, an expiry): the answer stands whatever the store says, and
 * a failure is one log line, `failed`.
 */
export async function recordReleaseOrLog(deps: Pick<PipelineDeps, 'store' | 'log'>, record: DeliveryRecord, failed: string): Promise<void> {
  await deps.store
    .recordRelease(record)
    .catch((err: unknown) => deps.log.error(failed, { notificationId: record.id, error: (err as Error).message }));
}

async function refusedAtRelease<C, P>(send: Send<C, P>, prepared: Prepared<P>, err: unknown): Promise<unknown> {
  if (!(err instanceof NotifyError) || !REFUSED_AT_RELEASE.has(err.code)) return err;
  const { deps } = send;
  const failed = { ...newRecord(send, prepared), status: 'failed' as const, error_code: err.code, status_updated_at: deps.now() };
  await recordReleaseOrLog(deps, failed, 'refused approved send not recorded');
  return err;
}

/**
 * The result kept under the release's key. A release taken over after the provider answered,
 * whose record write was lost (the store cut past its retries), left the row `approved`: the
 * result says how it went, and the row records it now.
 */
async function replayed<C, P>(send: Send<C, P>, prepared: Prepared<P>, status: string, result: SendResult): Promise<SendResult> {
  const { deps } = send;
  if (status === 'approved') {
    deps.log.warn('approved send recorded from its replayed result', { notificationId: prepared.id, via: result.via });
    const record = { ...newRecord(send, prepared), provider_message_id: result.provider_message_id ?? null, status_updated_at: deps.now() };
    await deps.store
      .recordRelease(record)
      .catch((e: unknown) =>
        deps.log.error('replayed approved send not recorded', { notificationId: prepared.id, error: (e as Error).message }),
      );
  }
  return { ...result, replayed: true };
}

/**
 * Sends a held send a person approved (row `approved`), released from the outbox like any
 * waiting send: claimed under a key of its own (`approved:<id>`), so a release that died
 * before its provider call is taken over and sends, and one that died during it leaves
 * `unknown`, never a second send. It sends the stored payload only when its hash is the one
 * the approval was bound to (`approvedSha256`, from the outbox entry the decision wrote),
 * and only after the checks every send meets as it leaves: the allowlist, opt-outs (in the
 * claim), quiet hours (which hold it again) and caps. The record is written onto its row,
 * only while the row is still `approved`.
 */
export async function releaseApproved(
  deps: PipelineDeps,
  entry: { id: string; via: string },
  approvedSha256: string,
  release: NonNullable<SendOptions['release']>,
): Promise<SendResult> {
  const connected = deps.channels.find((c) => c.name === entry.via);
  if (!connected) throw new Error(`no connected channel "${entry.via}"`);
  return connected
    .open((typed) => releaseTyped(deps, typed, release, approvedSha256))
    .catch((err: unknown) => {
      throw storeUnavailable(err, entry.via, deps.log) ?? err;
    });
}

/** The approved send as its steps see it: the send, its row as read, and what it sends (the stored payload). */
interface ApprovedSend<C, P> {
  send: Send<C, P>;
  row: DeliveryRecord;
  prepared: Prepared<P>;
  approvedSha256: string;
}

/** The release in order: the row, the claim, the checks as it leaves, then the dry run's record or the provider call. */
async function releaseTyped<C, P>(
  deps: PipelineDeps,
  channel: TypedChannel<C, P>,
  release: NonNullable<SendOptions['release']>,
  approvedSha256: string,
): Promise<SendResult> {
  const startedAt = deps.now();
  const row = await deps.store.getDelivery(release.id);
  if (!row) throw errors.notFound(`Approved notification ${release.id} has no record; nothing was sent.`, { via: channel.name });
  const send: Send<C, P> = {
    deps,
    channel,
    recipients: row.approval?.recipients ?? [],
    key: row.idempotency_key ?? undefined,
    opts: { client: row.client, release },
  };
  const approved: ApprovedSend<C, P> = {
    send,
    row,
    prepared: { id: row.id, approved: undefined, startedAt, payload: row.payload as P },
    approvedSha256,
  };
  const claimed = await claimApproved(approved);
  if (claimed.kind === 'replay') return claimed.result;
  const claim = claimed.handle;
  let budgetLeftMs: number;
  try {
    const left = await leave(approved, claim);
    if (left.kind === 'answered') return left.result;
    budgetLeftMs = left.budgetLeftMs;
  } catch (err) {
    await claim.release();
    throw row.status === 'approved' ? await refusedAtRelease(send, approved.prepared, err) : err;
  }
  let result: SendResult;
  try {
    result = await deliver(send, approved.prepared, { budgetLeftMs, claim, write: (record) => deps.store.recordRelease(record) });
  } catch (err) {
    await claim.fail(err);
    throw err;
  }
  await claim.complete(result);
  return result;
}

/**
 * The release's claim, under the approved send's own key (not the release's: a send held at
 * its release completed that key with the held answer), with the opt-out lookup riding in it.
 * Throws for an opted-out recipient (recorded) and for a release that died during its
 * provider call (recorded `unknown` until a receipt settles it).
 */
async function claimApproved<C, P>({
  send,
  row,
  prepared,
  approvedSha256,
}: ApprovedSend<C, P>): Promise<{ kind: 'claimed'; handle: ClaimHandle<SendResult> } | { kind: 'replay'; result: SendResult }> {
  const { deps, channel, recipients } = send;
  const via = channel.name;
  const name = approvedReleaseClaim(row.id);
  const claimed = await claimKey<SendResult>({
    store: deps.store,
    key: scopedKey(row.client, name),
    sentKey: name,
    payloadHash: approvedSha256,
    budgetMs: deps.config.sendBudgetMs,
    startedAt: prepared.startedAt,
    ttlMs: IDEMPOTENCY_TTL_MS,
    now: deps.now,
    log: deps.log,
    via,
    notificationId: row.id,
    optOut: { via, recipients },
  });
  if (claimed.kind === 'replay') return { kind: 'replay', result: await replayed(send, prepared, row.status, claimed.result) };
  if (claimed.kind === 'opted_out') throw await refusedAtRelease(send, prepared, errors.recipientOptedOut(claimed.recipient, via));
  if (claimed.kind === 'abandoned') {
    const err = claimed.handle.abandoned(row.id);
    const unknown = {
      ...newRecord(send, prepared),
      status: 'unknown' as const,
      error_code: 'DELIVERY_UNKNOWN',
      status_updated_at: deps.now(),
    };
    await recordReleaseOrLog(deps, unknown, 'abandoned approved send not recorded as unknown');
    await claimed.handle.keepFailure(err);
    throw err;
  }
  return { kind: 'claimed', handle: claimed.handle };
}

/**
 * The checks as it leaves, under its claim: the row still `approved` with the very payload
 * approved, the allowlist, quiet hours (which hold it again: the claim is freed), the caps,
 * its first contacts recorded; then a dry run's record. `go`: the provider call is next.
 */
async function leave<C, P>(
  { send, row, prepared, approvedSha256 }: ApprovedSend<C, P>,
  claim: ClaimHandle<SendResult>,
): Promise<{ kind: 'answered'; result: SendResult } | { kind: 'go'; budgetLeftMs: number }> {
  const { deps, channel, recipients } = send;
  const via = channel.name;
  const { startedAt } = prepared;
  if (row.status !== 'approved')
    throw errors.invalidField(`Notification ${row.id} is ${row.status}, not approved; nothing was sent.`, { via, path: '/id' });
  // What leaves is what was approved: the payload read here, hashed here, is the one sent.
  if (row.approval?.payload_sha256 !== approvedSha256 || payloadSha256(row.payload) !== approvedSha256) {
    deps.log.error('approved send not sent: its stored payload is not the one approved', { notificationId: row.id, via });
    throw errors.approvalRequired(`Notification ${row.id}'s stored message is not the one a person approved; nothing was sent.`, { via });
  }
  checkAllowed(channel, recipients);
  const call = row.approval.call === undefined ? undefined : channel.parse(row.approval.call);
  const quietEnd = quietRelease(deps, via, startedAt, row.approval.call?.urgent === true, row.client);
  if (quietEnd !== undefined) {
    await claim.release();
    return { kind: 'answered', result: heldByQuietHours(channel, row.id, startedAt, quietEnd) };
  }
  await deps.capGate?.charge(
    row.client,
    via,
    (m) => (call === undefined ? (m === via ? 1 : undefined) : channel.capAmount(m, call, undefined)),
    deps.now(),
  );
  // Before it leaves: its link must be known to the store (kept at the call too, best effort),
  // and its escalation's steps kept, due from now.
  if (call !== undefined) {
    const summary = channel.summary(call);
    await keepQuestion(
      deps.store,
      deps.answerKey,
      row.approval.call!,
      row.id,
      row.created_at,
      row.client,
      summary.headline,
      channel.recipients(call),
    );
    await keepSteps(deps, { id: row.id, call: row.approval.call!, summary, client: row.client }, deps.now());
  }
  const firstContacts = row.approval.first_contacts ?? [];
  if (firstContacts.length > 0) await deps.store.addContacts(via, firstContacts, deps.now(), row.client);
  if (!channel.live) {
    const result = sendResult(send, prepared, undefined);
    await deps.store.recordRelease({ ...newRecord(send, prepared), status_updated_at: deps.now() });
    await claim.complete(result);
    return { kind: 'answered', result };
  }
  return { kind: 'go', budgetLeftMs: budgetLeft(startedAt + deps.config.sendBudgetMs, deps.now(), deps.config.sendBudgetMs, via) };
}
