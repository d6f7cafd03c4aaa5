/**
 * The send use case for one validated notification: recipient policy, then a send that waits
 * (send_at, quiet hours) is kept in the outbox; otherwise opt-outs, a person's approval when
 * the operator's policy asks for one (./approval.ts; nothing stays held while they think),
 * idempotency, rate limits, caps and payload building, then the provider (./deliver.ts). A
 * scheduled release (./outbox.ts) runs the same use case with `release` set.
 * Knows nothing of MCP: the tool layer turns results and NotifyErrors into tool results.
 */
import type { TypedChannel } from '../channels/channel.js';
import { errors, NotifyError } from '../core/errors.js';
import { newNotificationId } from '../core/ids.js';
import type { OptOutCheck } from '../store/ports/contacts.js';
import { schemaHash } from '@notify-mcp/union';
import { approveSend, isApprovalAsk, type ApprovalAsk, type ApprovalStep, type Approved, type AwaitingApproval } from './approval.js';
import {
  auditOf,
  deliver,
  heldByQuietHours,
  recordAbandoned,
  recordDryRun,
  storeUnavailable,
  throwIfCancelled,
  type Prepared,
  type Send,
} from './deliver.js';
import { approvalClaim, scopedKey } from './claim-keys.js';
import { keepSteps, stopStepsOfFailedSend } from './escalation-steps.js';
import { claimKey, IDEMPOTENCY_TTL_MS, type ClaimHandle } from './idempotency.js';
import { keepQuestion, keepWaitingQuestion, WAITING } from './question.js';
import { checkAllowed } from './recipient-policy.js';
import { quietRelease, scheduleIfWaiting } from './schedule.js';
import { budgetLeft } from './send-budget.js';
import type { PipelineDeps, ReleaseWriter, SendOptions, SendResult } from './send-deps.js';

export type { PipelineDeps, RateGate, ReleaseWriter, SendOptions, SendResult, SendSettings } from './send-deps.js';

/**
 * Sends one call the union validated as channel `via`'s, for a caller no person can be asked
 * through (a release, a notice, a test): the approval step holds it in the console or refuses
 * it, never asks.
 */
export async function sendNotification(
  deps: PipelineDeps,
  via: string,
  value: Readonly<Record<string, unknown>>,
  opts: Omit<SendOptions, 'approval'>,
): Promise<SendResult> {
  const answer = await sendOrAsk(deps, via, value, opts);
  // Without an approval round no one can be asked (approveSend): a question here is a bug.
  if (isApprovalAsk(answer)) throw new Error(`a ${via} send without an approval round asked a person`);
  return answer;
}

/**
 * Sends one call the union validated as channel `via`'s, or answers with the question a person
 * must answer first (`opts.approval` says whether the client can ask). The channel is opened
 * here with its types, so the call reaches recipients and payload building, and the payload
 * its provider, as the channel module declared them.
 */
export async function sendOrAsk(
  deps: PipelineDeps,
  via: string,
  value: Readonly<Record<string, unknown>>,
  opts: SendOptions,
): Promise<SendResult | ApprovalAsk> {
  const channel = deps.channels.find((c) => c.name === via);
  // The union is built from the same channel list, so this is a bug, not a caller's mistake.
  if (!channel) throw new Error(`no connected channel "${via}"`);
  try {
    const answer = await channel.open((typed) => withRecipientClasses(typed, value, sendTyped(deps, typed, value, opts)));
    // A send that waits (scheduled, held, awaiting approval) keeps its question now, so its link
    // says "not sent yet"; its release keeps it again before it leaves (chargeAndBuild).
    if (value.ask !== undefined && !isApprovalAsk(answer) && WAITING.has(answer.status))
      await keepWaitingQuestion(deps, channel, value, answer, opts);
    return answer;
  } catch (err) {
    throw storeUnavailable(err, via, deps.log) ?? err;
  }
}

/** A refusal carries its recipients' classes for the log line the tool writes (never the addresses). */
async function withRecipientClasses<C, P, R>(
  channel: TypedChannel<C, P>,
  value: Readonly<Record<string, unknown>>,
  sending: Promise<R>,
): Promise<R> {
  try {
    return await sending;
  } catch (err) {
    if (err instanceof NotifyError && err.details.recipientClasses === undefined) {
      err.details.recipientClasses = [...new Set(channel.recipients(channel.parse(value)).map((r) => channel.recipientClass(r)))];
    }
    throw err;
  }
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
 * The whole send, in order: recipient policy, waiting (send_at, quiet hours), the opt-out
 * lookup, the approval of an unkeyed send, the idempotency claim, then the claimed send.
 */
async function sendTyped<C, P>(
  deps: PipelineDeps,
  channel: TypedChannel<C, P>,
  value: Readonly<Record<string, unknown>>,
  opts: SendOptions,
): Promise<SendResult | ApprovalAsk> {
  // The budget covers the whole call: what is spent before the provider call is not given to it.
  const startedAt = deps.now();
  const via = channel.name;
  const call = channel.parse(value);
  const recipients = channel.recipients(call);
  checkAllowed(channel, recipients, call);
  const waiting = await waitingAnswer(deps, channel, value, recipients, opts, startedAt);
  if (waiting) return waiting;

  const key = opts.release?.key ?? (typeof value.idempotency_key === 'string' ? value.idempotency_key : undefined);
  const optOut: OptOutCheck = { via, recipients };
  // A released dry run's record is fenced by its release (see ReleaseWriter): no key is claimed.
  const releaseWrite = !channel.live && deps.config.approval.rules.length === 0 ? opts.release?.write : undefined;
  const lookup = releaseWrite ? 'record' : optOutLookup(deps, channel.live, key !== undefined);
  if (lookup === 'alone') {
    const optedOut = await deps.store.findOptedOut(optOut);
    if (optedOut !== undefined) throw errors.recipientOptedOut(optedOut, via);
  }

  const approve = () => approveSend(deps, channel, call, opts.approval, opts.client, key ?? null, opts.release?.id);
  // A keyed send is asked about only once it holds its key: the claim alone says whether this
  // call is a replay (it sends nothing, so it asks no one), waits for another, or sends (then
  // the approval step runs, and a question or refusal releases the key). No lookup before the
  // claim decides for it: a key expiring between the two would send unasked. Nothing is held
  // while a person thinks: the question ends the call. An unkeyed send has no key to replay,
  // so it is asked first, and an approved one is claimed under its approval (a replayed
  // approval sends once).
  const unkeyedStep = key === undefined ? await approve() : undefined;
  if (unkeyedStep?.kind === 'awaiting') return pendingApprovalResult(deps, channel, recipients, opts.client, unkeyedStep.awaiting);
  if (unkeyedStep?.kind === 'ask') return unkeyedStep;
  const approvedUnkeyed = unkeyedStep?.kind === 'go' ? unkeyedStep.approved : undefined;
  const claimKeyName = key ?? (approvedUnkeyed && approvalClaim(approvedUnkeyed.id));
  // Chosen before the claim, which carries it: a taker of this key can then name what this
  // call may have sent. A keyed send's approval may choose another (the approved id).
  const id = opts.release?.id ?? approvedUnkeyed?.id ?? newNotificationId();
  const send: Send<C, P> = { deps, channel, recipients, key, opts };
  const claimed =
    claimKeyName === undefined || releaseWrite
      ? undefined
      : await claimSend(send, claimKeyName, value, { id, startedAt, optOut: lookup === 'claim' ? optOut : undefined });
  if (claimed?.kind === 'replay') return claimed.result;
  return sendClaimed(send, call, {
    id,
    claim: claimed?.handle,
    approval: key === undefined ? async () => unkeyedStep : approve,
    deadline: startedAt + deps.config.sendBudgetMs,
    releaseWrite,
    recordOptOut: lookup === 'record' ? optOut : undefined,
  });
}

/** The answer of a send that waits: scheduled or held at the call, or held again by quiet hours as its release leaves. */
async function waitingAnswer<C, P>(
  deps: PipelineDeps,
  channel: TypedChannel<C, P>,
  value: Readonly<Record<string, unknown>>,
  recipients: readonly string[],
  opts: SendOptions,
  now: number,
): Promise<SendResult | undefined> {
  if (opts.release === undefined) {
    return scheduleIfWaiting(deps, channel.name, channel.provider.name, value, recipients, {
      client: opts.client,
      audit: auditOf({ channel, recipients, opts }),
    });
  }
  // Quiet hours are asked again as a waiting send leaves: it may leave late, or the window may have changed.
  const quietEnd = quietRelease(deps, channel.name, now, value.urgent === true, opts.client);
  return quietEnd === undefined ? undefined : heldByQuietHours(channel, opts.release.id, now, quietEnd);
}

/**
 * The send's idempotency claim under `name`, scoped by client: the handle this call sends
 * under, or the first call's result to replay. Throws for an opted-out recipient (when the
 * lookup rides in the claim) and for a claim whose dead owner may have sent (DELIVERY_UNKNOWN).
 */
async function claimSend<C, P>(
  send: Send<C, P>,
  name: string,
  value: Readonly<Record<string, unknown>>,
  { id, startedAt, optOut }: { id: string; startedAt: number; optOut: OptOutCheck | undefined },
): Promise<{ kind: 'claimed'; handle: ClaimHandle<SendResult> } | { kind: 'replay'; result: SendResult }> {
  const { deps, channel, opts } = send;
  // What a key is bound to: the call without its key.
  const { idempotency_key: _key, ...content } = value;
  const claimed = await claimKey<SendResult>({
    store: deps.store,
    key: scopedKey(opts.client, name),
    sentKey: name,
    payloadHash: schemaHash(content),
    budgetMs: deps.config.sendBudgetMs,
    startedAt,
    ttlMs: IDEMPOTENCY_TTL_MS,
    now: deps.now,
    log: deps.log,
    via: channel.name,
    notificationId: id,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(optOut ? { optOut } : {}),
  });
  if (claimed.kind === 'opted_out') throw errors.recipientOptedOut(claimed.recipient, channel.name);
  if (claimed.kind === 'replay') return { kind: 'replay', result: { ...claimed.result, replayed: true } };
  if (claimed.kind === 'abandoned') {
    const err = claimed.handle.abandoned(claimed.notificationId);
    if (claimed.notificationId !== undefined) await recordAbandoned(send, claimed.notificationId);
    await claimed.handle.keepFailure(err);
    throw err;
  }
  return { kind: 'claimed', handle: claimed.handle };
}

/** What the claimed send needs besides the send itself. */
interface ClaimedSend<P> {
  id: string;
  claim: ClaimHandle<SendResult> | undefined;
  /** The approval step, run once the key is held (a keyed send), or its answer already given (an unkeyed one). */
  approval: () => Promise<ApprovalStep<P> | undefined>;
  deadline: number;
  releaseWrite: ReleaseWriter | undefined;
  /** The opt-out lookup, when it rides in the dry run's record. */
  recordOptOut: OptOutCheck | undefined;
}

/**
 * A send that holds its key (or needs none): the approval of a keyed send, the charges and the
 * payload (chargeAndBuild: rate limit, payload, caps), then the dry run's record, or the
 * provider call and its record, and last the claim's completion. Anything that stops it before the provider call frees the key.
 */
async function sendClaimed<C, P>(
  send: Send<C, P>,
  call: C,
  { id, claim, approval, deadline, releaseWrite, recordOptOut }: ClaimedSend<P>,
): Promise<SendResult | ApprovalAsk> {
  const { deps, channel, recipients, opts } = send;
  let prepared: Prepared<P> | undefined;
  let budgetLeftMs: number;
  try {
    const step = await approval();
    // Awaiting approval in the console: the key answers that from now on (the same call replays it).
    if (step?.kind === 'awaiting') {
      const pending = pendingApprovalResult(deps, channel, recipients, opts.client, step.awaiting);
      await claim?.complete(pending);
      return pending;
    }
    // A question ends the call with nothing sent: the key is free for the answered call.
    if (step?.kind === 'ask') {
      await claim?.release();
      return step;
    }
    prepared = await chargeAndBuild(send, call, step?.approved, id);
    budgetLeftMs = budgetLeft(deadline, deps.now(), deps.config.sendBudgetMs, channel.name);
    // A dry run is its record: written with the claim's completion, in one store write.
    if (!channel.live) {
      const recorded = await recordDryRun(send, prepared, { claim, releaseWrite, optOut: recordOptOut });
      await settleSteps(send, call, prepared.id);
      return recorded;
    }
  } catch (err) {
    // Nothing was sent: a refusal or a failure before the provider call frees the key.
    await claim?.release();
    // Only a dry run's record fails after its steps were kept (the last step of chargeAndBuild).
    if (prepared) await settleSteps(send, call, prepared.id, err);
    throw err;
  }

  let result: SendResult;
  try {
    result = await deliver(send, prepared, { budgetLeftMs, claim });
  } catch (err) {
    await claim?.fail(err);
    await settleSteps(send, call, prepared.id, err);
    throw err;
  }
  await claim?.complete(result);
  await settleSteps(send, call, prepared.id);
  return result;
}

/**
 * A send at the call whose outcome is known: the steps it kept may leave now (they waited for
 * it), or are cancelled when it failed. A release needs neither: its outbox entry's state
 * speaks for it, and the pass that released it looks again for what is due.
 */
async function settleSteps<C, P>({ deps, opts }: Send<C, P>, call: C, id: string, err?: unknown): Promise<void> {
  if (opts.release !== undefined || typeof (call as { escalate?: unknown }).escalate !== 'string') return;
  if (err !== undefined) await stopStepsOfFailedSend(deps, { id, client: opts.client }, err);
  deps.outbox?.wake(deps.now());
}

/** The answer to a send that awaits a person's approval in the console: its id, and that it waits (nothing was sent). Its row is written: onAwaitingApproval hears of it. */
function pendingApprovalResult<C, P>(
  deps: PipelineDeps,
  channel: TypedChannel<C, P>,
  recipients: readonly string[],
  client: string | null,
  awaiting: AwaitingApproval,
): SendResult {
  deps.onAwaitingApproval?.({
    id: awaiting.id,
    via: channel.name,
    client,
    recipientClasses: [...new Set(recipients.map((r) => channel.recipientClass(r)))],
  });
  return {
    id: awaiting.id,
    via: channel.name,
    status: 'pending_approval',
    provider: channel.provider.name,
    accepted_at: new Date(awaiting.at).toISOString(),
  };
}

/** Charges the rate limit, builds the payload (under its id) and charges the caps: everything before the provider call, counted against the budget. */
async function chargeAndBuild<C, P>(
  { deps, channel, opts }: Send<C, P>,
  call: C,
  approved: Approved<P> | undefined,
  newId: string,
): Promise<Prepared<P>> {
  // Here, not before idempotency: a replayed result sends nothing and costs no quota.
  // After the approval step: a call that ends in a question sends nothing either.
  await deps.rateGate?.check(opts.client, channel.name, deps.now());
  const id = approved?.id ?? newId;
  const startedAt = deps.now();
  // At most half the budget, so that the provider call keeps the rest. An approved send
  // sends the payload the person saw, as it was built for them.
  const { payload, meta } = approved?.built ?? (await channel.buildPayload(call, id, deps.config.sendBudgetMs / 2, startedAt));
  // Before it leaves: a message never carries a link its store does not know.
  const asked = (call as { ask?: unknown }).ask !== undefined;
  // An escalation step's token was kept pointing at its first send's question (./escalate.ts).
  if (asked && opts.release?.escalates === undefined)
    await keepQuestion(
      deps.store,
      deps.answerKey,
      call as Record<string, unknown>,
      id,
      startedAt,
      opts.client,
      channel.summary(call).headline,
      channel.recipients(call),
    );
  // The moment it leaves: a refusal here sends nothing, and a scheduled send counts now, not when it was scheduled.
  await deps.capGate?.charge(opts.client, channel.name, (m) => channel.capAmount(m, call, meta), deps.now());
  // Before the claim moves to `sending`: a throw here releases it.
  throwIfCancelled(opts.signal, channel.name);
  // Last before it leaves: no check can stop it after its steps are kept.
  await keepSteps(deps, { id, call: call as Record<string, unknown>, summary: channel.summary(call), client: opts.client }, deps.now());
  return meta === undefined ? { id, approved, startedAt, payload } : { id, approved, startedAt, payload, meta };
}
