/**
 * The send pipeline for one validated notification: recipient policy, opt-outs,
 * idempotency, rate limits and payload building, then the provider (retried inside what is
 * left of the send's budget), and a delivery record for every outcome the provider gave.
 * Knows nothing of MCP: the tool layer turns results and NotifyErrors into tool results.
 */
import { randomUUID } from 'node:crypto';
import type { ConnectedChannel, ResultMeta, TypedChannel } from '../channels/channel.js';
import type { Config } from '../config.js';
import { NotifyError } from '../errors.js';
import type { Logger } from '../log.js';
import { isAllowed } from '../policy/allowlist.js';
import { sendFailureInfo, sendWithRetry, type AttemptRecord } from '../providers/retry.js';
import type { DeliveryAttempt, DeliveryRecord, Store } from '../store/types.js';
import { schemaHash } from '../union/schema-hash.js';
import { IDEMPOTENCY_TTL_MS, runIdempotent, type SendSteps } from './idempotency.js';
import { budgetLeft } from './send-budget.js';

/** A send's answer; a channel's `meta` adds its own properties (SMS: segments, encoding). */
export interface SendResult {
  id: string;
  via: string;
  status: 'sent' | 'dry_run';
  provider: string;
  provider_message_id?: string;
  replayed?: boolean;
  accepted_at: string;
  [meta: string]: string | number | boolean | undefined;
}

/** Checked once the idempotency key is claimed, before the payload is built; rejects with NotifyError('RATE_LIMITED'). */
export interface RateGate {
  check(client: string | null, via: string, now: number): Promise<void>;
}

export interface PipelineDeps {
  config: Config;
  store: Store;
  /** Every channel, with its provider (src/channels/connect.ts). */
  channels: readonly ConnectedChannel[];
  log: Logger;
  now: () => number;
  rateGate?: RateGate;
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
}

function throwIfCancelled(signal: AbortSignal | undefined, via: string): void {
  if (signal?.aborted) {
    throw new NotifyError('CANCELLED', 'The call was cancelled before the provider was called; nothing was sent.', { via, cause: signal.reason });
  }
}

function toDeliveryAttempt(a: AttemptRecord): DeliveryAttempt {
  const entry: DeliveryAttempt = { attempt: a.attempt, outcome: a.outcome, latency_ms: a.latencyMs };
  if (a.vendorCode !== undefined) entry.vendor_code = a.vendorCode;
  return entry;
}

function newNotificationId(): string {
  return `ntf_${randomUUID().replaceAll('-', '')}`;
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
  return channel.open((typed) => sendTyped(deps, typed, value, opts));
}

async function sendTyped<C, P>(
  deps: PipelineDeps,
  channel: TypedChannel<C, P>,
  value: Readonly<Record<string, unknown>>,
  opts: SendOptions,
): Promise<SendResult> {
  // The budget covers the whole call: what is spent before the provider call is not given to it.
  const startedAt = deps.now();
  const budgetMs = deps.config.sendBudgetMs;
  const via = channel.name;
  const call = channel.parse(value);
  for (const recipient of channel.recipients(call)) {
    if (!isAllowed(channel.matcher, recipient, channel.allow)) {
      throw new NotifyError(
        'RECIPIENT_NOT_ALLOWED',
        `${recipient} is not on this server's ${via} allowlist (${channel.allowVariable}); nothing was sent. Use an allowed recipient, or ask the operator to add it.`,
        { via },
      );
    }
    if (await deps.store.isOptedOut(via, recipient)) {
      throw new NotifyError('RECIPIENT_OPTED_OUT', `${recipient} has opted out (replied STOP); nothing was sent. Do not retry.`, { via });
    }
  }

  const { idempotency_key: key, ...content } = value;
  const steps = deliverySteps(deps, channel, call, typeof key === 'string' ? key : undefined, opts);
  if (typeof key !== 'string') {
    const prepared = await steps.prepare();
    return steps.send(prepared, budgetLeft(startedAt + budgetMs, deps.now(), budgetMs, via));
  }
  const { result, replayed } = await runIdempotent(
    {
      store: deps.store,
      // Keys are scoped by client: two bots that pick the same key do not share results.
      key: JSON.stringify([opts.client ?? '', key]),
      payloadHash: schemaHash(content),
      budgetMs,
      startedAt,
      ttlMs: IDEMPOTENCY_TTL_MS,
      now: deps.now,
      log: deps.log,
      via,
    },
    steps,
  );
  return replayed ? { ...result, replayed: true } : result;
}

interface Prepared<P> {
  id: string;
  startedAt: number;
  payload: P;
  meta?: ResultMeta;
}

/** The send split where idempotency writes its `sending` phase: before the provider (or the dry-run record) is reached. */
function deliverySteps<C, P>(
  deps: PipelineDeps,
  channel: TypedChannel<C, P>,
  call: C,
  key: string | undefined,
  opts: SendOptions,
): SendSteps<Prepared<P>, SendResult> {
  return {
    async prepare() {
      // Here, not before idempotency: a replayed result sends nothing and costs no quota.
      await deps.rateGate?.check(opts.client, channel.name, deps.now());
      const id = newNotificationId();
      const startedAt = deps.now();
      // At most half the budget, so that the provider call keeps the rest.
      const { payload, meta } = await channel.buildPayload(call, id, deps.config.sendBudgetMs / 2);
      // Before the idempotency claim moves to `sending`: a throw here releases it.
      throwIfCancelled(opts.signal, channel.name);
      return meta === undefined ? { id, startedAt, payload } : { id, startedAt, payload, meta };
    },
    send: (prepared, budgetLeftMs) => deliver(deps, channel, call, key, opts, prepared, budgetLeftMs),
    // A dry run is its record: written with the claim's completion, in one store write.
    ...(channel.live ? {} : { recordCompleting: (prepared, claim) => deliver(deps, channel, call, key, opts, prepared, 0, claim) }),
  };
}

/** With `claim` (a dry run only): the record completes that idempotency claim; undefined when the claim was lost. */
function deliver<C, P>(
  deps: PipelineDeps,
  channel: TypedChannel<C, P>,
  call: C,
  key: string | undefined,
  opts: SendOptions,
  prepared: Prepared<P>,
  budgetLeftMs: number,
): Promise<SendResult>;
function deliver<C, P>(
  deps: PipelineDeps,
  channel: TypedChannel<C, P>,
  call: C,
  key: string | undefined,
  opts: SendOptions,
  prepared: Prepared<P>,
  budgetLeftMs: number,
  claim: { key: string; owner: string },
): Promise<SendResult | undefined>;
async function deliver<C, P>(
  deps: PipelineDeps,
  channel: TypedChannel<C, P>,
  call: C,
  key: string | undefined,
  opts: SendOptions,
  prepared: Prepared<P>,
  budgetLeftMs: number,
  claim?: { key: string; owner: string },
): Promise<SendResult | undefined> {
  const { id, startedAt, payload, meta } = prepared;
  const { provider, live, name: via } = channel;
  const record: DeliveryRecord = {
    id,
    via,
    status: live ? 'sent' : 'dry_run',
    provider: provider.name,
    provider_message_id: null,
    payload,
    error_code: null,
    attempts: 0,
    attempt_log: [],
    latency_ms: 0,
    client: opts.client,
    idempotency_key: key ?? null,
    created_at: startedAt,
  };
  const log = deps.log.child({ notificationId: id, via, client: opts.client });
  // Once the provider has answered, a store failure must not change the answer: reporting a
  // sent message as failed invites a retry that sends it again.
  const keepRecord = async (what: string, write: () => Promise<void>) =>
    write().catch((err: unknown) => log.error(`${what} not stored after the provider answered`, { error: (err as Error).message }));

  let providerMessageId: string | undefined;
  if (live) {
    throwIfCancelled(opts.signal, via);
    try {
      const sent = await sendWithRetry(provider, payload, {
        notificationId: id,
        budgetMs: budgetLeftMs,
        log,
        onRetry: opts.onRetry,
        ...(opts.signal ? { cancel: opts.signal } : {}),
      });
      providerMessageId = sent.receipt.providerMessageId;
      record.attempts = sent.attempts;
      record.attempt_log = sent.history.map(toDeliveryAttempt);
    } catch (err) {
      const info = sendFailureInfo(err);
      record.status = 'failed';
      record.error_code = err instanceof NotifyError ? err.code : 'DELIVERY_UNKNOWN';
      record.attempts = info?.attempts ?? 1;
      record.attempt_log = (info?.history ?? []).map(toDeliveryAttempt);
      record.latency_ms = deps.now() - startedAt;
      await keepRecord('delivery record', () => deps.store.recordDelivery(record));
      if (err instanceof NotifyError && err.code === 'RECIPIENT_OPTED_OUT') {
        await keepRecord('opt-out', async () => {
          for (const r of channel.recipients(call)) await deps.store.addOptOut(via, r, deps.now());
        });
      }
      log.warn('send failed', { code: record.error_code, attempts: record.attempts, latencyMs: record.latency_ms });
      if (err instanceof NotifyError) {
        err.details.via ??= via;
        throw err;
      }
      throw new NotifyError('DELIVERY_UNKNOWN', 'The send failed in an unexpected way; it may or may not have gone out.', { via, cause: err });
    }
  }
  record.provider_message_id = providerMessageId ?? null;
  record.latency_ms = deps.now() - startedAt;
  const base: SendResult = {
    id,
    via,
    status: live ? 'sent' : 'dry_run',
    provider: provider.name,
    accepted_at: new Date(startedAt).toISOString(),
  };
  if (providerMessageId) base.provider_message_id = providerMessageId;
  const result = meta === undefined ? base : { ...base, ...meta };
  // A dry run's record is its send: when it fails, nothing was recorded and the error stands.
  if (live) await keepRecord('delivery record', () => deps.store.recordDelivery(record));
  else if (!claim) await deps.store.recordDelivery(record);
  else if (!(await deps.store.recordDeliveryCompleting(record, { ...claim, result }))) return undefined;
  log.info(live ? 'sent' : 'dry run recorded', { attempts: record.attempts, latencyMs: record.latency_ms });
  return result;
}
