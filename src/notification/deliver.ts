/**
 * The steps every send use case shares, in the order a send meets them: the answers it
 * gives, its record, and the provider call with its record (claim, deliver, record). Each
 * is a function the use cases call (./pipeline.ts for a send or a scheduled release,
 * ./release-approved.ts for an approved one); none knows which one called it.
 */
import type { ResultMeta, TypedChannel } from '../channels/channel.js';
import { errors, NotifyError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { sendFailureInfo, sendWithRetry, type AttemptRecord, type RetryResult } from '../providers/retry.js';
import { StoreUnavailableError } from '../store/errors.js';
import type { AuditContext } from '../store/ports/audit.js';
import type { OptOutCheck } from '../store/ports/contacts.js';
import type { DeliveryAttempt, DeliveryRecord, RecordWrite } from '../store/ports/deliveries.js';
import type { Approved } from './approval.js';
import type { ClaimHandle } from './idempotency.js';
import { writeAfterAnswer } from './after-answer.js';
import { newDeliveryRecord } from './new-record.js';
import type { PipelineDeps, ReleaseWriter, SendOptions, SendResult } from './send-deps.js';
import { applyEarlyReceipts } from './status-receipt.js';

export function throwIfCancelled(signal: AbortSignal | undefined, via: string): void {
  if (signal?.aborted) {
    throw errors.cancelledBeforeSend(via, signal.reason);
  }
}

/** `startedAt`: when each attempt started, in order (heard through onAttempt). */
function toDeliveryAttempt(a: AttemptRecord, i: number, startedAt: readonly number[]): DeliveryAttempt {
  const entry: DeliveryAttempt = { attempt: a.attempt, outcome: a.outcome, latency_ms: a.latencyMs };
  if (a.vendorCode !== undefined) entry.vendor_code = a.vendorCode;
  if (startedAt[i] !== undefined) entry.at = startedAt[i];
  if (a.endpoint !== undefined) entry.endpoint = a.endpoint;
  if (a.digest !== undefined) entry.digest = a.digest;
  return entry;
}

/**
 * A store fault that escaped the send came before the provider call: every store write
 * after the provider answered is kept from changing the answer (see `keepRecord`, and
 * the claim handle's fenced writes). So nothing was sent, and the same call may be retried.
 */
export function storeUnavailable(err: unknown, via: string, log: Logger): NotifyError | undefined {
  if (!(err instanceof StoreUnavailableError)) return undefined;
  log.warn('send stopped: store unavailable', { via, store: err.store, reason: err.reason });
  return errors.storeUnavailable(err.retryAfterS, via, err);
}

/** The answer of a release that quiet hours hold: its entry waits again until `releaseAt` (./outbox.ts). */
export function heldByQuietHours<C, P>(channel: TypedChannel<C, P>, id: string, at: number, releaseAt: number): SendResult {
  return {
    id,
    via: channel.name,
    status: 'held',
    provider: channel.provider.name,
    accepted_at: new Date(at).toISOString(),
    release_at: new Date(releaseAt).toISOString(),
  };
}

/** A release whose lease ran out before its record was written: the process that took it over writes it. */
export function releaseTakenOver(via: string): NotifyError {
  return errors.idempotencyInProgress('This release ran past its lease and another process took it over; this one wrote nothing.', { via });
}

/** A provider too busy or unavailable to take the send, which it did not: a release waits again for these. */
export function isCongestion(err: unknown): err is NotifyError {
  return err instanceof NotifyError && (err.code === 'RATE_LIMITED' || err.code === 'PROVIDER_UNAVAILABLE');
}

export interface Prepared<P> {
  id: string;
  approved: Approved<P> | undefined;
  startedAt: number;
  payload: P;
  meta?: ResultMeta;
}

/** One send as the steps below see it: what it sends, to whom, for whom. */
export interface Send<C, P> {
  deps: PipelineDeps;
  channel: TypedChannel<C, P>;
  /** Every recipient (bcc included): an opt-out the provider reports applies to them. */
  recipients: readonly string[];
  key: string | undefined;
  opts: SendOptions;
}

/** What a send's record adds to its audit entries: the tool, and its recipients' classes (never the addresses). */
export function auditOf<C, P>({ channel, recipients, opts }: Pick<Send<C, P>, 'channel' | 'recipients' | 'opts'>): AuditContext {
  return { tool: opts.tool ?? null, recipients: recipients.map((r) => channel.recipientClass(r)) };
}

/** The record of a send as it starts: `sent` or `dry_run`, no attempts yet. */
export function newRecord<C, P>({ channel, key, opts }: Send<C, P>, { id, approved, startedAt, payload }: Prepared<P>): DeliveryRecord {
  const status = channel.live ? 'sent' : 'dry_run';
  return newDeliveryRecord(channel, {
    id,
    status,
    payload,
    error_code: null,
    client: opts.client,
    idempotency_key: key ?? null,
    at: startedAt,
    approval: approved?.record ?? null,
  });
}

export function sendResult<C, P>(
  { channel }: Send<C, P>,
  { id, startedAt, meta }: Prepared<P>,
  providerMessageId: string | undefined,
): SendResult {
  const base: SendResult = {
    id,
    via: channel.name,
    status: channel.live ? 'sent' : 'dry_run',
    provider: channel.provider.name,
    accepted_at: new Date(startedAt).toISOString(),
  };
  if (providerMessageId) base.provider_message_id = providerMessageId;
  // Added to base, not spread into a copy: a spread followed by more properties takes V8's
  // slow path (a map migration per object).
  return meta === undefined ? base : Object.assign(base, meta);
}

/**
 * A dry run: its record is its send, written in one store write with the claim's completion,
 * or by its release's writer (fenced by the release), or with the opt-out lookup. When the
 * write fails, nothing was recorded and the error stands.
 */
export async function recordDryRun<C, P>(
  send: Send<C, P>,
  prepared: Prepared<P>,
  {
    claim,
    releaseWrite,
    optOut,
  }: { claim: ClaimHandle<SendResult> | undefined; releaseWrite: ReleaseWriter | undefined; optOut: OptOutCheck | undefined },
): Promise<SendResult> {
  const { deps, channel, opts } = send;
  const record = newRecord(send, prepared);
  record.latency_ms = deps.now() - prepared.startedAt;
  record.status_updated_at = deps.now();
  const result = sendResult(send, prepared, undefined);
  const written = releaseWrite
    ? await releaseWrite(record, { audit: auditOf(send), ...(optOut ? { optOut } : {}) }, result)
    : await deps.store.writeRecord(record, {
        audit: auditOf(send),
        ...(optOut ? { optOut } : {}),
        ...(claim ? { claim: claim.completion(result) } : {}),
      });
  if (written.kind === 'claim_lost') throw claim ? claim.lost() : releaseTakenOver(channel.name);
  if (written.kind === 'opted_out') throw errors.recipientOptedOut(written.recipient, channel.name);
  deps.log.info('dry run recorded', {
    notificationId: record.id,
    via: channel.name,
    client: opts.client,
    attempts: 0,
    latencyMs: record.latency_ms,
  });
  return result;
}

/**
 * What a taker of an abandoned send knows of it: the id it was sent under, and that its
 * outcome is unknown. Recorded `unknown` unless its owner recorded it before dying, so that
 * get_notification answers and a receipt (Twilio's callback carries the id) settles it.
 * The payload is not known here (null). The answer stands whatever the store says.
 */
export async function recordAbandoned<C, P>(send: Send<C, P>, id: string): Promise<void> {
  const { deps, channel, key, opts } = send;
  const log = deps.log.child({ notificationId: id, via: channel.name, client: opts.client });
  const now = deps.now();
  const record = newDeliveryRecord(channel, {
    id,
    status: 'unknown',
    payload: null,
    error_code: 'DELIVERY_UNKNOWN',
    client: opts.client,
    idempotency_key: key ?? null,
    at: now,
    approval: null,
  });
  try {
    if (await deps.store.getDelivery(id)) return;
    await deps.store.writeRecord(record, { audit: auditOf(send) });
    if (channel.takesReceipts) await applyEarlyReceipts(deps, record);
  } catch (err) {
    // Its owner's late record may have won the id: either way a record is there to settle.
    log.error('abandoned send not recorded as unknown', { error: (err as Error).message });
  }
}

/** How a send reaches its provider: what is left of its budget, the claim it holds, and how its record is written. */
export interface DeliverOptions {
  budgetLeftMs: number;
  /** Moved to `sending` just before the request is written, after any wait for a provider slot. */
  claim: ClaimHandle<SendResult> | undefined;
  write?: (record: DeliveryRecord) => Promise<RecordWrite | boolean>;
}

/**
 * The provider call and its record. Throws only when nothing was sent, or with
 * DELIVERY_UNKNOWN (recorded `unknown`, with its notification id) when it may have been.
 */
export async function deliver<C, P>(
  send: Send<C, P>,
  prepared: Prepared<P>,
  { budgetLeftMs, claim, write = (record) => send.deps.store.writeRecord(record, { audit: auditOf(send) }) }: DeliverOptions,
): Promise<SendResult> {
  const { deps, channel, opts } = send;
  const { id, startedAt, payload } = prepared;
  const via = channel.name;
  const out: Outcome = {
    record: newRecord(send, prepared),
    write,
    log: deps.log.child({ notificationId: id, via, client: opts.client }),
    attemptStarts: [],
    retryForMs: deps.config.sendBudgetMs,
  };
  throwIfCancelled(opts.signal, via);
  // Set when the claim could not be moved to `sending` (another call took it over): nothing was written, and nothing is recorded.
  let claimLost = false;
  const beforeRequest =
    claim &&
    (async () => {
      try {
        await claim.markSending(id);
      } catch (err) {
        claimLost = true;
        throw err;
      }
    });
  let sent: RetryResult;
  try {
    sent = await sendWithRetry(channel.provider, payload, {
      notificationId: id,
      budgetMs: budgetLeftMs,
      log: out.log,
      onRetry: opts.onRetry,
      onAttempt: (a) => out.attemptStarts.push(deps.now() - a.latencyMs),
      ...(beforeRequest ? { beforeRequest } : {}),
      ...(opts.release?.deferrable ? { maxQueueMs: budgetLeftMs / 2 } : {}),
      ...(opts.signal ? { cancel: opts.signal } : {}),
    });
  } catch (err) {
    if (claimLost || (opts.release?.deferrable && isCongestion(err))) throw err;
    throw await recordFailure(send, prepared, out, err);
  }
  const { record } = out;
  record.provider_status = sent.receipt.providerStatus ?? null;
  if (sent.receipt.conversation !== undefined) record.provider_conversation = sent.receipt.conversation;
  record.attempts = sent.attempts;
  record.attempt_log = sent.history.map((a, i) => toDeliveryAttempt(a, i, out.attemptStarts));
  record.provider_message_id = sent.receipt.providerMessageId ?? null;
  record.latency_ms = deps.now() - startedAt;
  record.status_updated_at = deps.now();
  const result = sendResult(send, prepared, sent.receipt.providerMessageId);
  const recorded = await keepRecord(out, 'delivery record', () => write(record));
  if (recorded && channel.takesReceipts && record.provider_message_id !== null) await applyEarly(deps, out);
  deps.log.info('sent', { notificationId: id, via, client: opts.client, attempts: record.attempts, latencyMs: record.latency_ms });
  return result;
}

/** A delivery's record as it is filled in, how it is written, and the send's log. */
interface Outcome {
  record: DeliveryRecord;
  write: (record: DeliveryRecord) => Promise<RecordWrite | boolean>;
  /** Every line about this send carries notificationId, via and client. */
  log: Logger;
  /** When each attempt started, in order. */
  attemptStarts: number[];
  /** How long a record write is tried again while the store is down: the send budget. */
  retryForMs: number;
}

/**
 * Once the provider has answered, a store failure must not change the answer: reporting a
 * sent message as failed invites a retry that sends it again. True when written.
 */
const keepRecord = (out: Outcome, what: string, write: () => Promise<unknown>): Promise<boolean> =>
  writeAfterAnswer(write, out.retryForMs, (err, again) =>
    out.log.error(`${what} not stored after the provider answered${again ? '; trying again' : ''}`, { error: err.message }),
  );

/** Early receipts (those that outran this record) were kept for it: applied now that it is there; a failure here changes no answer either. */
const applyEarly = (deps: PipelineDeps, out: Outcome) =>
  applyEarlyReceipts(deps, out.record).catch((err: unknown) =>
    out.log.error('held receipts not applied after the record was written', { error: (err as Error).message }),
  );

/**
 * A provider call that did not end `sent`: its record (`unknown` when the provider may have
 * it, which a receipt can still settle; otherwise `failed`), an opt-out it reported, and the
 * error the send answers with, naming the notification when its outcome is unknown.
 */
async function recordFailure<C, P>(send: Send<C, P>, prepared: Prepared<P>, out: Outcome, err: unknown): Promise<NotifyError> {
  const { deps, channel } = send;
  const { record } = out;
  const info = sendFailureInfo(err);
  record.error_code = err instanceof NotifyError ? err.code : 'DELIVERY_UNKNOWN';
  record.status = record.error_code === 'DELIVERY_UNKNOWN' ? 'unknown' : 'failed';
  record.attempts = info?.attempts ?? 1;
  record.attempt_log = (info?.history ?? []).map((a, i) => toDeliveryAttempt(a, i, out.attemptStarts));
  record.latency_ms = deps.now() - prepared.startedAt;
  record.status_updated_at = deps.now();
  const recorded = await keepRecord(out, 'delivery record', () => out.write(record));
  // An outcome lost is settled by the provider's receipts: those that outran this record, now.
  if (recorded && record.status === 'unknown' && channel.takesReceipts) await applyEarly(deps, out);
  if (err instanceof NotifyError && err.code === 'RECIPIENT_OPTED_OUT') {
    await keepRecord(out, 'opt-out', async () => {
      for (const r of send.recipients) await deps.store.addOptOut(channel.name, r, deps.now());
    });
  }
  out.log.warn('send failed', { code: record.error_code, attempts: record.attempts, latencyMs: record.latency_ms });
  if (!(err instanceof NotifyError)) {
    return errors.deliveryUnknown('The send failed in an unexpected way; it may or may not have gone out.', {
      via: channel.name,
      cause: err,
      notificationId: prepared.id,
    });
  }
  err.details.via ??= channel.name;
  // The record that get_notification and receipts settle.
  if (err.code === 'DELIVERY_UNKNOWN') err.details.notificationId = prepared.id;
  return err;
}
