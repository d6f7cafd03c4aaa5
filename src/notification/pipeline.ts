/**
 * The send pipeline for one validated notification: recipient policy, opt-outs,
 * idempotency, rate limits and payload building, then the provider (retried inside what is
 * left of the send's budget), and a delivery record for every outcome the provider gave.
 * Knows nothing of MCP: the tool layer turns results and NotifyErrors into tool results.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import { NotifyError } from '../errors.js';
import type { Logger } from '../log.js';
import { ALLOW_VARIABLE, isAllowed } from '../policy/allowlist.js';
import type { Provider } from '../providers/types.js';
import { sendFailureInfo, sendWithRetry, type AttemptRecord } from '../providers/retry.js';
import type { DeliveryAttempt, DeliveryRecord, Store } from '../store/types.js';
import { schemaHash } from '../union/schema-hash.js';
import { channelFor, type Via } from './channels/index.js';
import type { PayloadMeta } from './channels/types.js';
import { IDEMPOTENCY_TTL_MS, runIdempotent, type SendSteps } from './idempotency.js';
import { budgetLeft } from './send-budget.js';
import type { Notification } from './union.js';

export interface SendResult {
  id: string;
  via: Via;
  status: 'sent' | 'dry_run';
  provider: string;
  provider_message_id?: string;
  segments?: number;
  encoding?: string;
  replayed?: boolean;
  accepted_at: string;
}

/** Checked once the idempotency key is claimed, before the payload is built; rejects with NotifyError('RATE_LIMITED'). */
export interface RateGate {
  check(client: string | null, via: Via, now: number): Promise<void>;
}

export interface PipelineDeps {
  config: Config;
  store: Store;
  providers: { [V in Via]: Provider<never> };
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

function throwIfCancelled(signal: AbortSignal | undefined, via: Via): void {
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

export async function sendNotification(deps: PipelineDeps, n: Notification, opts: SendOptions): Promise<SendResult> {
  // The budget covers the whole call: what is spent before the provider call is not given to it.
  const startedAt = deps.now();
  const budgetMs = deps.config.sendBudgetMs;
  const channel = channelFor(n);
  const recipients = channel.recipients(n);
  const allow = deps.config[n.via].allow;
  for (const recipient of recipients) {
    if (!isAllowed(n.via, recipient, allow)) {
      throw new NotifyError(
        'RECIPIENT_NOT_ALLOWED',
        `${recipient} is not on this server's ${n.via} allowlist (${ALLOW_VARIABLE[n.via]}); nothing was sent. Use an allowed recipient, or ask the operator to add it.`,
        { via: n.via },
      );
    }
    if (await deps.store.isOptedOut(n.via, recipient)) {
      throw new NotifyError('RECIPIENT_OPTED_OUT', `${recipient} has opted out (replied STOP); nothing was sent. Do not retry.`, { via: n.via });
    }
  }

  const steps = deliverySteps(deps, n, opts);
  const key = n.idempotency_key;
  if (!key) {
    const prepared = await steps.prepare();
    return steps.send(prepared, budgetLeft(startedAt + budgetMs, deps.now(), budgetMs, n.via));
  }
  const { idempotency_key: _, ...content } = n;
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
      via: n.via,
    },
    steps,
  );
  return replayed ? { ...result, replayed: true } : result;
}

interface Prepared {
  id: string;
  startedAt: number;
  payload: unknown;
  meta?: PayloadMeta;
}

/** The send split where idempotency writes its `sending` phase: before the provider (or the dry-run record) is reached. */
function deliverySteps(deps: PipelineDeps, n: Notification, opts: SendOptions): SendSteps<Prepared, SendResult> {
  return {
    async prepare() {
      // Here, not before idempotency: a replayed result sends nothing and costs no quota.
      await deps.rateGate?.check(opts.client, n.via, deps.now());
      const id = newNotificationId();
      const startedAt = deps.now();
      const { payload, meta } = await channelFor(n).buildPayload(n, { id, config: deps.config });
      // Before the idempotency claim moves to `sending`: a throw here releases it.
      throwIfCancelled(opts.signal, n.via);
      return meta === undefined ? { id, startedAt, payload } : { id, startedAt, payload, meta };
    },
    send: (prepared, budgetLeftMs) => deliver(deps, n, opts, prepared, budgetLeftMs),
  };
}

async function deliver(deps: PipelineDeps, n: Notification, opts: SendOptions, prepared: Prepared, budgetLeftMs: number): Promise<SendResult> {
  const { id, startedAt, payload, meta } = prepared;
  const provider = deps.providers[n.via] as Provider<unknown>;
  const live = deps.config[n.via].live;
  const record: DeliveryRecord = {
    id,
    via: n.via,
    status: live ? 'sent' : 'dry_run',
    provider: provider.name,
    provider_message_id: null,
    payload,
    error_code: null,
    attempts: 0,
    attempt_log: [],
    latency_ms: 0,
    client: opts.client,
    idempotency_key: n.idempotency_key ?? null,
    created_at: startedAt,
  };
  const log = deps.log.child({ notificationId: id, via: n.via, client: opts.client });
  // Once the provider has answered, a store failure must not change the answer: reporting a
  // sent message as failed invites a retry that sends it again.
  const keepRecord = async (what: string, write: () => Promise<void>) =>
    write().catch((err: unknown) => log.error(`${what} not stored after the provider answered`, { error: (err as Error).message }));

  let providerMessageId: string | undefined;
  if (live) {
    throwIfCancelled(opts.signal, n.via);
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
          for (const r of channelFor(n).recipients(n)) await deps.store.addOptOut(n.via, r, deps.now());
        });
      }
      log.warn('send failed', { code: record.error_code, attempts: record.attempts, latencyMs: record.latency_ms });
      if (err instanceof NotifyError) {
        err.details.via ??= n.via;
        throw err;
      }
      throw new NotifyError('DELIVERY_UNKNOWN', 'The send failed in an unexpected way; it may or may not have gone out.', { via: n.via, cause: err });
    }
  }
  record.provider_message_id = providerMessageId ?? null;
  record.latency_ms = deps.now() - startedAt;
  // A dry run's record is its send: when it fails, nothing was recorded and the error stands.
  if (live) await keepRecord('delivery record', () => deps.store.recordDelivery(record));
  else await deps.store.recordDelivery(record);
  log.info(live ? 'sent' : 'dry run recorded', { attempts: record.attempts, latencyMs: record.latency_ms });

  const result: SendResult = {
    id,
    via: n.via,
    status: record.status as SendResult['status'],
    provider: provider.name,
    accepted_at: new Date(startedAt).toISOString(),
  };
  if (providerMessageId) result.provider_message_id = providerMessageId;
  if (meta?.segments !== undefined) result.segments = meta.segments;
  if (meta?.encoding !== undefined) result.encoding = meta.encoding;
  return result;
}
