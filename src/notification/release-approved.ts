/**
 * The release of a send a person approved in the console: the use case the outbox runs for
 * an approved entry (./outbox.ts), sending the stored payload the person saw, after the
 * checks every send meets as it leaves.
 */
import type { ConnectedChannel, TypedChannel } from '../channels/channel.js';
import { errors, NotifyError } from '../core/errors.js';
import { payloadSha256 } from './approval.js';
import { deliver, heldUntil, newRecord, sendResult, storeUnavailable, type Prepared, type Send } from './deliver.js';
import { claimKey, IDEMPOTENCY_TTL_MS } from './idempotency.js';
import { checkAllowed } from './recipient-policy.js';
import { quietRelease } from './schedule.js';
import { budgetLeft } from './send-budget.js';
import type { PipelineDeps, SendOptions, SendResult } from './send-deps.js';

/**
 * What an approved send's outbox entry carries as its call: nothing to build from. Its
 * payload is the one the person approved, on its delivery row; the key cannot be a field
 * of any channel's call.
 */
export const APPROVED_CALL_KEY = '$approved';

/** The outbox call of an approved send bound to `payloadSha256` (./held.ts enqueues it). */
export const approvedCall = (payloadSha256: string): Record<string, unknown> => ({ [APPROVED_CALL_KEY]: payloadSha256 });

/** Refusals at an approved send's release that end it: its row, still `approved`, records the refusal. */
const REFUSED_AT_RELEASE: ReadonlySet<string> = new Set(['RECIPIENT_NOT_ALLOWED', 'RECIPIENT_OPTED_OUT', 'APPROVAL_REQUIRED']);

async function refusedAtRelease<C, P>(send: Send<C, P>, prepared: Prepared<P>, err: unknown): Promise<unknown> {
  if (!(err instanceof NotifyError) || !REFUSED_AT_RELEASE.has(err.code)) return err;
  const { deps } = send;
  const failed = { ...newRecord(send, prepared), status: 'failed' as const, error_code: err.code, status_updated_at: deps.now() };
  await deps.store
    .recordRelease(failed)
    .catch((e: unknown) =>
      deps.log.error('refused approved send not recorded', { notificationId: prepared.id, error: (e as Error).message }),
    );
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
  return releaseOpened(deps, connected, release, approvedSha256).catch((err: unknown) => {
    throw storeUnavailable(err, entry.via, deps.log) ?? err;
  });
}

async function releaseOpened(
  deps: PipelineDeps,
  connected: ConnectedChannel,
  release: NonNullable<SendOptions['release']>,
  approvedSha256: string,
): Promise<SendResult> {
  return connected.open(async <C, P>(typed: TypedChannel<C, P>) => {
    const via = typed.name;
    const startedAt = deps.now();
    const held = await deps.store.getDelivery(release.id);
    if (!held) throw errors.notFound(`Approved notification ${release.id} has no record; nothing was sent.`, { via });
    const recipients = held.approval?.recipients ?? [];
    const send: Send<C, P> = {
      deps,
      channel: typed,
      recipients,
      key: held.idempotency_key ?? undefined,
      opts: { client: held.client, release },
    };
    const prepared: Prepared<P> = { id: held.id, approved: undefined, startedAt, payload: held.payload as P };
    // Not the release's own key: a send held at its release completed that key with the held answer.
    const approvedKey = `approved:${release.id}`;
    const claimed = await claimKey<SendResult>({
      store: deps.store,
      key: JSON.stringify([held.client ?? '', approvedKey]),
      sentKey: approvedKey,
      payloadHash: approvedSha256,
      budgetMs: deps.config.sendBudgetMs,
      startedAt,
      ttlMs: IDEMPOTENCY_TTL_MS,
      now: deps.now,
      log: deps.log,
      via,
      notificationId: held.id,
      optOut: { via, recipients },
    });
    if (claimed.kind === 'replay') return replayed(send, prepared, held.status, claimed.result);
    if (claimed.kind === 'opted_out') throw await refusedAtRelease(send, prepared, errors.recipientOptedOut(claimed.recipient, via));
    if (claimed.kind === 'abandoned') {
      // A release died during its provider call: the row says `unknown` until a receipt settles it.
      const err = claimed.handle.abandoned(held.id);
      const unknown = {
        ...newRecord(send, prepared),
        status: 'unknown' as const,
        error_code: 'DELIVERY_UNKNOWN',
        status_updated_at: deps.now(),
      };
      await deps.store
        .recordRelease(unknown)
        .catch((e: unknown) =>
          deps.log.error('abandoned approved send not recorded as unknown', { notificationId: held.id, error: (e as Error).message }),
        );
      await claimed.handle.keepFailure(err);
      throw err;
    }
    const claim = claimed.handle;
    let budgetLeftMs: number;
    try {
      if (held.status !== 'approved')
        throw errors.invalidField(`Notification ${held.id} is ${held.status}, not approved; nothing was sent.`, { via, path: '/id' });
      // What leaves is what was approved: the payload read here, hashed here, is the one sent.
      if (held.approval?.payload_sha256 !== approvedSha256 || payloadSha256(held.payload) !== approvedSha256) {
        deps.log.error('approved send not sent: its stored payload is not the one approved', { notificationId: held.id, via });
        throw errors.approvalRequired(`Notification ${held.id}'s stored message is not the one a person approved; nothing was sent.`, {
          via,
        });
      }
      checkAllowed(typed, recipients);
      const call = held.approval.call === undefined ? undefined : typed.parse(held.approval.call);
      const quietEnd = quietRelease(deps, via, startedAt, held.approval.call?.urgent === true, held.client);
      if (quietEnd !== undefined) {
        await claim.release();
        return heldUntil(typed, held.id, startedAt, quietEnd);
      }
      await deps.capGate?.charge(
        held.client,
        via,
        (m) => (call === undefined ? (m === via ? 1 : undefined) : typed.capAmount(m, call, undefined)),
        deps.now(),
      );
      const firstContacts = held.approval.first_contacts ?? [];
      if (firstContacts.length > 0) await deps.store.addContacts(via, firstContacts, deps.now(), held.client);
      if (!typed.live) {
        const result = sendResult(send, prepared, undefined);
        await deps.store.recordRelease({ ...newRecord(send, prepared), status_updated_at: deps.now() });
        await claim.complete(result);
        return result;
      }
      budgetLeftMs = budgetLeft(startedAt + deps.config.sendBudgetMs, deps.now(), deps.config.sendBudgetMs, via);
    } catch (err) {
      await claim.release();
      throw held.status === 'approved' ? await refusedAtRelease(send, prepared, err) : err;
    }
    let result: SendResult;
    try {
      result = await deliver(send, prepared, { budgetLeftMs, claim, write: (record) => deps.store.recordRelease(record) });
    } catch (err) {
      await claim.fail(err);
      throw err;
    }
    await claim.complete(result);
    return result;
  });
}
