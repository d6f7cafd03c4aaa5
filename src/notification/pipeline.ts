/**
 * The send pipeline for one validated notification: recipient policy, opt-outs, idempotency,
 * a person's approval when the operator's policy asks for one (./approval.ts; nothing stays
 * held while they think), rate limits and payload building, then the provider (retried inside what is
 * left of the send's budget), and a delivery record for every outcome the provider gave.
 * Knows nothing of MCP: the tool layer turns results and NotifyErrors into tool results.
 */
import type { ConnectedChannel, ResultMeta, TypedChannel } from '../channels/channel.js';
import { NotifyError } from '../core/errors.js';
import { newNotificationId } from '../core/ids.js';
import type { Logger } from '../core/log.js';
import type { CapGate } from '../policy/caps.js';
import type { RateGate } from '../policy/rate-limit.js';
import { sendFailureInfo, sendWithRetry, type AttemptRecord } from '../providers/retry.js';
import { StoreUnavailableError } from '../store/errors.js';
import type { AuditContext, DeliveryAttempt, DeliveryRecord, OptOutCheck, RecordWrite, Store } from '../store/types.js';
import { schemaHash } from '@notify-mcp/union';
import { ApprovalHeld, approveSend, payloadSha256, type ApprovalRound, type Approved } from './approval.js';
import { claimKey, IDEMPOTENCY_TTL_MS, type ClaimHandle } from './idempotency.js';
import { newDeliveryRecord } from './new-record.js';
import { budgetLeft } from './send-budget.js';
import type { SendSettings } from './settings.js';
import { checkAllowed } from './recipient-policy.js';
import { quietRelease, scheduleIfWaiting } from './schedule.js';
import { applyHeldReceipts } from './status-receipt.js';

export type { RateGate } from '../policy/rate-limit.js';
export type { SendSettings } from './settings.js';

/** A send's answer; a channel's `meta` adds its own properties (SMS: segments, encoding). */
export interface SendResult {
  id: string;
  via: string;
  status: 'sent' | 'dry_run' | 'scheduled' | 'held' | 'pending_approval';
  provider: string;
  provider_message_id?: string;
  replayed?: boolean;
  accepted_at: string;
  [meta: string]: string | number | boolean | undefined;
}

export interface PipelineDeps {
  config: SendSettings;
  store: Store;
  /** Every channel, with its provider (src/channels/connect.ts). */
  channels: readonly ConnectedChannel[];
  log: Logger;
  now: () => number;
  rateGate?: RateGate;
  /** NOTIFY_CAPS, charged just before a send leaves. */
  capGate?: CapGate;
  /** The release loop, told when this process schedules a send (./outbox.ts). */
  outbox?: { wake(dueAt: number): void };
  /** Told of each send held for the console, once, as it is held (NOTIFY_APPROVAL_NOTIFY); must not throw. */
  onHeld?: (held: { id: string; via: string; client: string | null; recipientClasses: string[] }) => void;
}

export interface SendOptions {
  /** Authenticated client (HTTP token) or clientInfo.name; scopes idempotency keys. */
  client: string | null;
  /** Called before each retry wait, for progress notifications. */
  onRetry?: (attempt: number, delayMs: number, reason: string) => void;
  /**
   * The client cancelled the call (MCP). Until the provider is called, the send stops with
   * CANCELLED and nothing is sent; once a provider call has started it runs to its outcome,
   * which is recorded like any other.
   */
  signal?: AbortSignal;
  /** What the client can do, and what a person answered, when the approval policy applies (./approval.ts). */
  approval?: ApprovalRound;
  /**
   * The release of a waiting send (./outbox.ts): sent now under this notification id, claimed
   * under this key, and never scheduled again. `deferrable`: the release may wait again in the
   * outbox, so a congested provider (RATE_LIMITED, PROVIDER_UNAVAILABLE, nothing sent) leaves
   * no record, and a request waits for a provider slot at most half of what is left.
   */
  release?: { id: string; key: string; write?: ReleaseWriter; deferrable?: boolean };
  /** The tool the call came through, for the audit log. */
  tool?: string;
}

/**
 * How a released dry run writes its record (./outbox.ts batches them): with the end of its
 * release, fenced by the release's owner, in place of an idempotency claim. A dry run calls
 * no provider, so a release that dies before its record is simply released again.
 */
export type ReleaseWriter = (record: DeliveryRecord, opts: { audit: AuditContext; optOut?: OptOutCheck }, result: SendResult) => Promise<RecordWrite>;

function throwIfCancelled(signal: AbortSignal | undefined, via: string): void {
  if (signal?.aborted) {
    throw new NotifyError('CANCELLED', 'The call was cancelled before the provider was called; nothing was sent.', { via, cause: signal.reason });
  }
}

/** `startedAt`: when each attempt started, in order (heard through onAttempt). */
function toDeliveryAttempt(a: AttemptRecord, i: number, startedAt: readonly number[]): DeliveryAttempt {
  const entry: DeliveryAttempt = { attempt: a.attempt, outcome: a.outcome, latency_ms: a.latencyMs };
  if (a.vendorCode !== undefined) entry.vendor_code = a.vendorCode;
  if (startedAt[i] !== undefined) entry.at = startedAt[i];
  return entry;
}

/**
 * Sends one call the union validated as channel `via`'s. The channel is opened here with its
 * types, so the call reaches recipients and payload building, and the payload its provider,
 * as the channel module declared them.
 */
export async function sendNotification(
  deps: PipelineDeps,
  via: string,
  value: Readonly<Record<string, unknown>>,
  opts: SendOptions,
): Promise<SendResult> {
  const channel = deps.channels.find((c) => c.name === via);
  // The union is built from the same channel list, so this is a bug, not a caller's mistake.
  if (!channel) throw new Error(`no connected channel "${via}"`);
  const approvedSha256 = value[APPROVED_CALL_KEY];
  if (opts.release && typeof approvedSha256 === 'string') {
    return releaseApproved(deps, channel, opts.release, approvedSha256).catch((err: unknown) => {
      throw storeUnavailable(err, via, deps.log) ?? err;
    });
  }
  return channel.open((typed) => withRecipientClasses(typed, value, sendTyped(deps, typed, value, opts))).catch((err: unknown) => {
    throw storeUnavailable(err, via, deps.log) ?? err;
  });
}

/** A refusal carries its recipients' classes for the log line the tool writes (never the addresses). */
async function withRecipientClasses<C, P>(channel: TypedChannel<C, P>, value: Readonly<Record<string, unknown>>, sending: Promise<SendResult>): Promise<SendResult> {
  try {
    return await sending;
  } catch (err) {
    if (err instanceof NotifyError && err.details.recipientClasses === undefined) {
      err.details.recipientClasses = [...new Set(channel.recipients(channel.parse(value)).map((r) => channel.recipientClass(r)))];
    }
    throw err;
  }
}

/**
 * A store fault that escaped the send came before the provider call: every store write
 * after the provider answered is kept from changing the answer (see `keepRecord`, and
 * the claim handle's fenced writes). So nothing was sent, and the same call may be retried.
 */
function storeUnavailable(err: unknown, via: string, log: Logger): NotifyError | undefined {
  if (!(err instanceof StoreUnavailableError)) return undefined;
  log.warn('send stopped: store unavailable', { via, store: err.store, reason: err.reason });
  return new NotifyError(
    'STORE_UNAVAILABLE',
    `Try the same call again in ${err.retryAfterS} s (with the same idempotency_key, if it has one). Nothing was sent: this server's database is unavailable right now, and a send is only made once it is recorded safely.`,
    { via, retryAfterS: err.retryAfterS, cause: err },
  );
}

/** Where a send's one opt-out lookup is made: on its own, or riding in the claim's or the record's store call. */
type OptOutLookup = 'alone' | 'claim' | 'record';

/**
 * A keyed send without approval rules looks opt-outs up with its claim (one round trip
 * fewer). An unkeyed dry run without approval rules or rate limits looks them up with its
 * record: building its payload sends nothing and counts against nothing. Any other send
 * looks them up first, before a person is asked, a quota is spent or a provider is called.
 */
function optOutLookup(deps: PipelineDeps, live: boolean, keyed: boolean): OptOutLookup {
  if (deps.config.approval.rules.length > 0) return 'alone';
  if (keyed) return 'claim';
  return !live && deps.rateGate === undefined ? 'record' : 'alone';
}

/**
 * The whole send, in order: recipient policy, the opt-out lookup, the approval of an unkeyed
 * send, the idempotency claim, preparation (approval of a keyed send, rate limit, payload),
 * then the dry run's record, or the `sending` phase, the provider call and the record, and
 * last the claim's completion.
 */
async function sendTyped<C, P>(
  deps: PipelineDeps,
  channel: TypedChannel<C, P>,
  value: Readonly<Record<string, unknown>>,
  opts: SendOptions,
): Promise<SendResult> {
  // The budget covers the whole call: what is spent before the provider call is not given to it.
  const startedAt = deps.now();
  const budgetMs = deps.config.sendBudgetMs;
  const deadline = startedAt + budgetMs;
  const via = channel.name;
  const call = channel.parse(value);
  const recipients = channel.recipients(call);
  checkAllowed(channel, recipients, call);

  if (opts.release === undefined) {
    const waiting = await scheduleIfWaiting(deps, via, channel.provider.name, value, recipients, { client: opts.client, audit: auditOf({ channel, recipients, opts }) });
    if (waiting) return waiting;
  } else {
    // Quiet hours are asked again as a waiting send leaves: it may leave late, or the window may have changed.
    const quietEnd = quietRelease(deps, via, startedAt, value.urgent === true, opts.client);
    if (quietEnd !== undefined) return heldUntil(channel, opts.release.id, startedAt, quietEnd);
  }

  const key = opts.release?.key ?? (typeof value.idempotency_key === 'string' ? value.idempotency_key : undefined);
  const optOut: OptOutCheck = { via, recipients };
  // A released dry run's record is fenced by its release (see ReleaseWriter): no key is claimed.
  const releaseWrite = !channel.live && deps.config.approval.rules.length === 0 ? opts.release?.write : undefined;
  const lookup = releaseWrite ? 'record' : optOutLookup(deps, channel.live, key !== undefined);
  if (lookup === 'alone') {
    const optedOut = await deps.store.findOptedOut(optOut);
    if (optedOut !== undefined) throw optedOutError(optedOut, via);
  }

  // What a key is bound to: the call without its key. Only keyed (or approved) sends need
  // it; a plain send pays neither for the hash nor for the copy.
  const contentHash = () => {
    const { idempotency_key: _key, ...content } = value;
    return schemaHash(content);
  };
  const approve = () => approveSend(deps, channel, call, opts.approval, opts.client, key ?? null, opts.release?.id);
  // A keyed send is asked about only once it holds its key: the claim alone says whether this
  // call is a replay (it sends nothing, so it asks no one), waits for another, or sends (then
  // the approval step runs, and a question or refusal releases the key). No lookup before the
  // claim decides for it: a key expiring between the two would send unasked. Nothing is held
  // while a person thinks: the question ends the call. An unkeyed send has no key to replay,
  // so it is asked first, and an approved one is claimed under its approval (a replayed
  // approval sends once).
  let approvedUnkeyed: Approved<P> | undefined;
  try {
    approvedUnkeyed = key === undefined ? await approve() : undefined;
  } catch (err) {
    if (err instanceof ApprovalHeld) return heldResult(deps, channel, recipients, opts.client, err);
    throw err;
  }
  const claimKeyName = key ?? (approvedUnkeyed && `approval:${approvedUnkeyed.id}`);
  // Chosen before the claim, which carries it: a taker of this key can then name what this
  // call may have sent. A keyed send's approval may choose another (the approved id).
  const id = opts.release?.id ?? approvedUnkeyed?.id ?? newNotificationId();
  const send: Send<C, P> = { deps, channel, recipients, key, opts };

  let claim: ClaimHandle<SendResult> | undefined;
  if (claimKeyName !== undefined && !releaseWrite) {
    const claimed = await claimKey<SendResult>({
      store: deps.store,
      // Keys are scoped by client: two bots that pick the same key do not share results.
      key: JSON.stringify([opts.client ?? '', claimKeyName]),
      sentKey: claimKeyName,
      payloadHash: contentHash(),
      budgetMs,
      startedAt,
      ttlMs: IDEMPOTENCY_TTL_MS,
      now: deps.now,
      log: deps.log,
      via,
      notificationId: id,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(lookup === 'claim' ? { optOut } : {}),
    });
    if (claimed.kind === 'opted_out') throw optedOutError(claimed.recipient, via);
    if (claimed.kind === 'replay') return { ...claimed.result, replayed: true };
    if (claimed.kind === 'abandoned') {
      const err = claimed.handle.abandoned(claimed.notificationId);
      if (claimed.notificationId !== undefined) await recordAbandoned(send, claimed.notificationId);
      await claimed.handle.keepFailure(err);
      throw err;
    }
    claim = claimed.handle;
  }

  let prepared: Prepared<P>;
  let budgetLeftMs: number;
  try {
    prepared = await prepare(send, call, key === undefined ? approvedUnkeyed : await approve(), id);
    budgetLeftMs = budgetLeft(deadline, deps.now(), budgetMs, via);
    // A dry run is its record: written with the claim's completion, in one store write.
    if (!channel.live) return await recordDryRun(send, prepared, { claim, releaseWrite, optOut: lookup === 'record' ? optOut : undefined });
  } catch (err) {
    // Held for the console: the key answers that from now on (the same call replays it).
    if (err instanceof ApprovalHeld) {
      const held = heldResult(deps, channel, recipients, opts.client, err);
      await claim?.complete(held);
      return held;
    }
    // Nothing was sent: a question, a refusal or a failure before the provider call frees the key.
    await claim?.release();
    throw err;
  }

  let result: SendResult;
  try {
    result = await deliver(send, prepared, { budgetLeftMs, claim });
  } catch (err) {
    await claim?.fail(err);
    throw err;
  }
  await claim?.complete(result);
  return result;
}

/** The answer to a send held for the console: its id, and that it waits (nothing was sent). Its row is written: onHeld hears of it. */
function heldResult<C, P>(deps: PipelineDeps, channel: TypedChannel<C, P>, recipients: readonly string[], client: string | null, err: ApprovalHeld): SendResult {
  deps.onHeld?.({ id: err.held.id, via: channel.name, client, recipientClasses: [...new Set(recipients.map((r) => channel.recipientClass(r)))] });
  return { id: err.held.id, via: channel.name, status: 'pending_approval', provider: channel.provider.name, accepted_at: new Date(err.held.at).toISOString() };
}

/** The answer of a release that quiet hours hold: its entry waits again until `releaseAt` (./outbox.ts). */
function heldUntil<C, P>(channel: TypedChannel<C, P>, id: string, at: number, releaseAt: number): SendResult {
  return { id, via: channel.name, status: 'held', provider: channel.provider.name, accepted_at: new Date(at).toISOString(), release_at: new Date(releaseAt).toISOString() };
}

/** A release whose lease ran out before its record was written: the process that took it over writes it. */
function releaseTakenOver(via: string): NotifyError {
  return new NotifyError('IDEMPOTENCY_IN_PROGRESS', 'This release ran past its lease and another process took it over; this one wrote nothing.', { via });
}

/** A provider too busy or unavailable to take the send, which it did not: a release waits again for these. */
export function isCongestion(err: unknown): err is NotifyError {
  return err instanceof NotifyError && (err.code === 'RATE_LIMITED' || err.code === 'PROVIDER_UNAVAILABLE');
}

function optedOutError(recipient: string, via: string): NotifyError {
  return new NotifyError('RECIPIENT_OPTED_OUT', `${recipient} has opted out (replied STOP); nothing was sent. Do not retry.`, { via });
}

interface Prepared<P> {
  id: string;
  approved: Approved<P> | undefined;
  startedAt: number;
  payload: P;
  meta?: ResultMeta;
}

/** One send as the steps below see it: what it sends, to whom, for whom. */
interface Send<C, P> {
  deps: PipelineDeps;
  channel: TypedChannel<C, P>;
  /** Every recipient (bcc included): an opt-out the provider reports applies to them. */
  recipients: readonly string[];
  key: string | undefined;
  opts: SendOptions;
}

/** What a send's record adds to its audit entries: the tool, and its recipients' classes (never the addresses). */
function auditOf<C, P>({ channel, recipients, opts }: Pick<Send<C, P>, 'channel' | 'recipients' | 'opts'>): AuditContext {
  return { tool: opts.tool ?? null, recipients: recipients.map((r) => channel.recipientClass(r)) };
}

/** Everything before the provider call, counted against the budget: rate limit, id and payload. */
async function prepare<C, P>({ deps, channel, opts }: Send<C, P>, call: C, approved: Approved<P> | undefined, newId: string): Promise<Prepared<P>> {
  // Here, not before idempotency: a replayed result sends nothing and costs no quota.
  // After the approval step: a call that ends in a question sends nothing either.
  await deps.rateGate?.check(opts.client, channel.name, deps.now());
  const id = approved?.id ?? newId;
  const startedAt = deps.now();
  // At most half the budget, so that the provider call keeps the rest. An approved send
  // sends the payload the person saw, as it was built for them.
  const { payload, meta } = approved?.built ?? (await channel.buildPayload(call, id, deps.config.sendBudgetMs / 2, startedAt));
  // The moment it leaves: a refusal here sends nothing, and a scheduled send counts now, not when it was scheduled.
  await deps.capGate?.charge(opts.client, channel.name, (m) => channel.capAmount(m, call, meta), deps.now());
  // Before the claim moves to `sending`: a throw here releases it.
  throwIfCancelled(opts.signal, channel.name);
  return meta === undefined ? { id, approved, startedAt, payload } : { id, approved, startedAt, payload, meta };
}

/** The record of a send as it starts: `sent` or `dry_run`, no attempts yet. */
function newRecord<C, P>({ channel, key, opts }: Send<C, P>, { id, approved, startedAt, payload }: Prepared<P>): DeliveryRecord {
  const status = channel.live ? 'sent' : 'dry_run';
  return newDeliveryRecord(channel, { id, status, payload, error_code: null, client: opts.client, idempotency_key: key ?? null, at: startedAt, approval: approved?.record ?? null });
}

function sendResult<C, P>({ channel }: Send<C, P>, { id, startedAt, meta }: Prepared<P>, providerMessageId: string | undefined): SendResult {
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
async function recordDryRun<C, P>(
  send: Send<C, P>,
  prepared: Prepared<P>,
  { claim, releaseWrite, optOut }: { claim: ClaimHandle<SendResult> | undefined; releaseWrite: ReleaseWriter | undefined; optOut: OptOutCheck | undefined },
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
  if (written.kind === 'opted_out') throw optedOutError(written.recipient, channel.name);
  deps.log.info('dry run recorded', { notificationId: record.id, via: channel.name, client: opts.client, attempts: 0, latencyMs: record.latency_ms });
  return result;
}

/**
 * What a taker of an abandoned send knows of it: the id it was sent under, and that its
 * outcome is unknown. Recorded `unknown` unless its owner recorded it before dying, so that
 * get_notification answers and a receipt (Twilio's callback carries the id) settles it.
 * The payload is not known here (null). The answer stands whatever the store says.
 */
async function recordAbandoned<C, P>(send: Send<C, P>, id: string): Promise<void> {
  const { deps, channel, key, opts } = send;
  const log = deps.log.child({ notificationId: id, via: channel.name, client: opts.client });
  const now = deps.now();
  const record = newDeliveryRecord(channel, { id, status: 'unknown', payload: null, error_code: 'DELIVERY_UNKNOWN', client: opts.client, idempotency_key: key ?? null, at: now, approval: null });
  try {
    if (await deps.store.getDelivery(id)) return;
    await deps.store.writeRecord(record, { audit: auditOf(send) });
    if (channel.takesReceipts) await applyHeldReceipts(deps, record);
  } catch (err) {
    // Its owner's late record may have won the id: either way a record is there to settle.
    log.error('abandoned send not recorded as unknown', { error: (err as Error).message });
  }
}

/** How a send reaches its provider: what is left of its budget, the claim it holds, and how its record is written. */
interface DeliverOptions {
  budgetLeftMs: number;
  /** Moved to `sending` just before the request is written, after any wait for a provider slot. */
  claim: ClaimHandle<SendResult> | undefined;
  write?: (record: DeliveryRecord) => Promise<RecordWrite | boolean>;
}

/**
 * The provider call and its record. Throws only when nothing was sent, or with
 * DELIVERY_UNKNOWN (recorded `unknown`, with its notification id) when it may have been.
 */
async function deliver<C, P>(send: Send<C, P>, prepared: Prepared<P>, { budgetLeftMs, claim, write = (record) => send.deps.store.writeRecord(record, { audit: auditOf(send) }) }: DeliverOptions): Promise<SendResult> {
  const { deps, channel, opts } = send;
  const { id, startedAt, payload } = prepared;
  const { provider, name: via } = channel;
  const record = newRecord(send, prepared);
  // Every line about this send carries notificationId, via and client.
  const log = deps.log.child({ notificationId: id, via, client: opts.client });
  // Once the provider has answered, a store failure must not change the answer: reporting a
  // sent message as failed invites a retry that sends it again.
  const keepRecord = async (what: string, write: () => Promise<unknown>): Promise<boolean> =>
    write().then(
      () => true,
      (err: unknown) => {
        log.error(`${what} not stored after the provider answered`, { error: (err as Error).message });
        return false;
      },
    );
  // Receipts that outran this record were held for it: applied now that it is there. A
  // failure here must not change the answer either: the provider has the message.
  const applyHeld = () =>
    applyHeldReceipts(deps, record).catch((err: unknown) =>
      log.error('held receipts not applied after the record was written', { error: (err as Error).message }),
    );

  const attemptStarts: number[] = [];
  throwIfCancelled(opts.signal, via);
  let providerMessageId: string | undefined;
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
  try {
    const sent = await sendWithRetry(provider, payload, {
      notificationId: id,
      budgetMs: budgetLeftMs,
      log,
      onRetry: opts.onRetry,
      onAttempt: (a) => attemptStarts.push(deps.now() - a.latencyMs),
      ...(beforeRequest ? { beforeRequest } : {}),
      ...(opts.release?.deferrable ? { maxQueueMs: budgetLeftMs / 2 } : {}),
      ...(opts.signal ? { cancel: opts.signal } : {}),
    });
    providerMessageId = sent.receipt.providerMessageId;
    record.provider_status = sent.receipt.providerStatus ?? null;
    if (sent.receipt.conversation !== undefined) record.provider_conversation = sent.receipt.conversation;
    record.attempts = sent.attempts;
    record.attempt_log = sent.history.map((a, i) => toDeliveryAttempt(a, i, attemptStarts));
  } catch (err) {
    if (claimLost || (opts.release?.deferrable && isCongestion(err))) throw err;
    const info = sendFailureInfo(err);
    record.error_code = err instanceof NotifyError ? err.code : 'DELIVERY_UNKNOWN';
    // The provider may have it: not `failed`, which a receipt could never correct.
    record.status = record.error_code === 'DELIVERY_UNKNOWN' ? 'unknown' : 'failed';
    record.attempts = info?.attempts ?? 1;
    record.attempt_log = (info?.history ?? []).map((a, i) => toDeliveryAttempt(a, i, attemptStarts));
    record.latency_ms = deps.now() - startedAt;
    record.status_updated_at = deps.now();
    const recorded = await keepRecord('delivery record', () => write(record));
    // An outcome lost is settled by the provider's receipts: those that outran this record, now.
    if (recorded && record.status === 'unknown' && channel.takesReceipts) await applyHeld();
    if (err instanceof NotifyError && err.code === 'RECIPIENT_OPTED_OUT') {
      await keepRecord('opt-out', async () => {
        for (const r of send.recipients) await deps.store.addOptOut(via, r, deps.now());
      });
    }
    log.warn('send failed', { code: record.error_code, attempts: record.attempts, latencyMs: record.latency_ms });
    if (err instanceof NotifyError) {
      err.details.via ??= via;
      // The record that get_notification and receipts settle.
      if (err.code === 'DELIVERY_UNKNOWN') err.details.notificationId = id;
      throw err;
    }
    throw new NotifyError('DELIVERY_UNKNOWN', 'The send failed in an unexpected way; it may or may not have gone out.', { via, cause: err, notificationId: id });
  }
  record.provider_message_id = providerMessageId ?? null;
  record.latency_ms = deps.now() - startedAt;
  record.status_updated_at = deps.now();
  const result = sendResult(send, prepared, providerMessageId);
  const recorded = await keepRecord('delivery record', () => write(record));
  if (recorded && channel.takesReceipts && record.provider_message_id !== null) await applyHeld();
  deps.log.info('sent', { notificationId: id, via, client: opts.client, attempts: record.attempts, latencyMs: record.latency_ms });
  return result;
}

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
  await deps.store.recordRelease(failed).catch((e: unknown) => deps.log.error('refused approved send not recorded', { notificationId: prepared.id, error: (e as Error).message }));
  return err;
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
async function releaseApproved(deps: PipelineDeps, connected: ConnectedChannel, release: NonNullable<SendOptions['release']>, approvedSha256: string): Promise<SendResult> {
  return connected.open(async <C, P>(typed: TypedChannel<C, P>) => {
    const via = typed.name;
    const startedAt = deps.now();
    const held = await deps.store.getDelivery(release.id);
    if (!held) throw new NotifyError('NOT_FOUND', `Approved notification ${release.id} has no record; nothing was sent.`, { via });
    const recipients = held.approval?.recipients ?? [];
    const send: Send<C, P> = { deps, channel: typed, recipients, key: held.idempotency_key ?? undefined, opts: { client: held.client, release } };
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
    if (claimed.kind === 'replay') return { ...claimed.result, replayed: true };
    if (claimed.kind === 'opted_out') throw await refusedAtRelease(send, prepared, optedOutError(claimed.recipient, via));
    if (claimed.kind === 'abandoned') {
      // A release died during its provider call: the row says `unknown` until a receipt settles it.
      const err = claimed.handle.abandoned(held.id);
      const unknown = { ...newRecord(send, prepared), status: 'unknown' as const, error_code: 'DELIVERY_UNKNOWN', status_updated_at: deps.now() };
      await deps.store.recordRelease(unknown).catch((e: unknown) => deps.log.error('abandoned approved send not recorded as unknown', { notificationId: held.id, error: (e as Error).message }));
      await claimed.handle.keepFailure(err);
      throw err;
    }
    const claim = claimed.handle;
    let budgetLeftMs: number;
    try {
      if (held.status !== 'approved') throw new NotifyError('INVALID_FIELD', `Notification ${held.id} is ${held.status}, not approved; nothing was sent.`, { via, path: '/id' });
      // What leaves is what was approved: the payload read here, hashed here, is the one sent.
      if (held.approval?.payload_sha256 !== approvedSha256 || payloadSha256(held.payload) !== approvedSha256) {
        deps.log.error('approved send not sent: its stored payload is not the one approved', { notificationId: held.id, via });
        throw new NotifyError('APPROVAL_REQUIRED', `Notification ${held.id}'s stored message is not the one a person approved; nothing was sent.`, { via });
      }
      checkAllowed(typed, recipients);
      const call = held.approval.call === undefined ? undefined : typed.parse(held.approval.call);
      const quietEnd = quietRelease(deps, via, startedAt, held.approval.call?.urgent === true, held.client);
      if (quietEnd !== undefined) {
        await claim.release();
        return heldUntil(typed, held.id, startedAt, quietEnd);
      }
      await deps.capGate?.charge(held.client, via, (m) => (call === undefined ? (m === via ? 1 : undefined) : typed.capAmount(m, call, undefined)), deps.now());
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
