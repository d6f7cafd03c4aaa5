/**
 * The release of waiting sends: what is due is claimed in the store (each entry by exactly
 * one process of those sharing it) and sent through the pipeline under its own notification
 * id and an idempotency key of its own (`outbox:<id>`), so the claim, fencing and budget
 * rules of idempotency apply to it: a process that dies mid-send leaves a claim that the
 * next release takes over, and which answers DELIVERY_UNKNOWN (`unknown`) once its provider
 * call may have started, never a second send.
 *
 * `releaseEntry` takes any waiting entry now due, whatever held it (send_at, quiet hours, an
 * approval): a later caller that makes a held send due releases it with `releaseNow`.
 *
 * The loop that runs the passes is ./outbox-runner.ts.
 */
import { randomUUID } from 'node:crypto';
import { NotifyError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { AuditActor, OutboxEntry, OutboxState } from '../store/ports/index.js';
import { writeAfterAnswer } from './after-answer.js';
import { outboxReleaseClaim } from './claim-keys.js';
import { isCongestion } from './deliver.js';
import { sendNotification, type PipelineDeps, type ReleaseWriter } from './pipeline.js';
import { recordBatch, type RecordBatch } from './record-batch.js';
import { recordReleaseOrLog, releaseApproved } from './release-approved.js';
import { DEFAULT_TIME } from './settings.js';
import { advance, statesTaking } from './status.js';

/**
 * How many due entries one claim takes; a batch is released concurrently, and its dry runs'
 * records are written together (`recordBatch`). Live sends take the smaller batch: 250 at
 * once behind NOTIFY_PROVIDER_CONCURRENCY slots outwaited their send budget (and a batch
 * must end within its lease).
 */
const BATCH = 250;
const LIVE_BATCH = 50;
/** How often a pass whose store had nothing more due asks again while a release is still in flight. */
const RECLAIM_MS = 1_000;
/** The backoff of a release that met a congested provider: at least this, growing with the congestion, at most MAX_BACKOFF_MS. */
const MIN_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;

export const WAITING_STATES: readonly OutboxState[] = statesTaking('release');

/** The outcome of one release, for logs and tests. */
export type Released = { id: string; state: OutboxState; code?: string };

/** Until a release's lease ends no other process takes it; past it, its owner died (its idempotency claim is stale by then). */
export const leaseMs = (deps: PipelineDeps) => 2 * deps.config.sendBudgetMs + 1_000;

/**
 * Sends one claimed entry (state `releasing`, owned by `owner`) and records how it ended.
 * Errors that leave the entry to be taken again (the store down, another release of it in
 * flight) leave it `releasing`: its lease runs out and a later pass takes it.
 */
export async function releaseEntry(deps: PipelineDeps, entry: OutboxEntry, owner: string, batch?: RecordBatch): Promise<Released> {
  const log = deps.log.child({ notificationId: entry.id, via: entry.via, client: entry.client });
  // Set when the record's write ended the release too (a dry run in a batch).
  let finishedWithRecord = false;
  const write: ReleaseWriter | undefined =
    batch &&
    (async (record, opts, result) => {
      const written = await batch.write({ id: entry.id, record, outcome: result, ...opts });
      finishedWithRecord = written.kind === 'written';
      return written;
    });
  const time = deps.config.time ?? DEFAULT_TIME;
  const congestion = { since: entry.congested_since ?? deps.now(), graceMs: time.graceMs };
  // Congestion holds it again while a backoff still ends within the grace from when it began.
  const deferrable = deps.now() + MIN_BACKOFF_MS < congestion.since + congestion.graceMs;
  let ending: Ending;
  try {
    const release = {
      id: entry.id,
      key: outboxReleaseClaim(entry.id),
      deferrable,
      ...(write ? { write } : {}),
      ...(entry.escalates ? { escalates: entry.escalates } : {}),
    };
    const result =
      entry.approved_sha256 !== undefined
        ? await releaseApproved(deps, entry, entry.approved_sha256, release)
        : await sendNotification(deps, entry.via, entry.call, { client: entry.client, release });
    // Quiet hours, asked again as it left, hold it until they end.
    if (result.status === 'held' && typeof result.release_at === 'string')
      return await holdAgain(deps, entry, owner, Date.parse(result.release_at), false, log);
    if (finishedWithRecord) {
      log.info('released', { state: 'released' });
      return { id: entry.id, state: 'released' };
    }
    ending = { state: 'released', outcome: result };
  } catch (err) {
    const failed = await releaseFailed(deps, entry, owner, err, { deferrable, congestion, log });
    if ('id' in failed) return failed;
    ending = failed;
  }
  return await finishEntry(deps, entry, owner, ending, log);
}

/** How a release ended, to be written on its entry: `released` with its result, or `failed` / `unknown` with its error body. */
type Ending = { state: OutboxState; outcome: unknown };

/**
 * A release that threw: deferred (the store down, another release in flight), held again (a
 * cap reached, a congested provider), or ended (`failed`, `unknown`, or `released` when a
 * dead release's record says it left).
 */
async function releaseFailed(
  deps: PipelineDeps,
  entry: OutboxEntry,
  owner: string,
  err: unknown,
  { deferrable, congestion, log }: { deferrable: boolean; congestion: { since: number; graceMs: number }; log: Logger },
): Promise<Released | Ending> {
  if (err instanceof NotifyError && (err.code === 'STORE_UNAVAILABLE' || err.code === 'IDEMPOTENCY_IN_PROGRESS')) {
    log.warn('release deferred', { code: err.code });
    return { id: entry.id, state: 'releasing', code: err.code };
  }
  // A cap reached at release holds the send until the cap resets: a scheduled send that
  // meets the day's cap leaves when it resets, as its sender would expect, rather than fail.
  const resetsAt =
    err instanceof NotifyError && err.code === 'CAP_REACHED' && err.details.resetsAt !== undefined ? Date.parse(err.details.resetsAt) : NaN;
  // Not an escalation step: a page that waits for tomorrow's cap is no escalation; it stops, CAP_REACHED in its state.
  if (!Number.isNaN(resetsAt) && entry.escalates === undefined)
    return await holdAgain(deps, entry, owner, resetsAt, false, log, 'CAP_REACHED');
  // Congestion holds work, never drops it: nothing was sent, so it waits again with a backoff
  // that grows with how long the provider has been congested.
  if (deferrable && isCongestion(err)) {
    const now = deps.now();
    const backoff = Math.max(
      (err.details.retryAfterS ?? 0) * 1_000,
      Math.min(MAX_BACKOFF_MS, Math.max(MIN_BACKOFF_MS, now - congestion.since)),
    );
    const dueAt = Math.min(now + backoff + Math.floor(Math.random() * MIN_BACKOFF_MS), congestion.since + congestion.graceMs);
    return await holdAgain(deps, entry, owner, dueAt, true, log, err.code);
  }
  const body = err instanceof NotifyError ? err.toBody() : { code: 'INTERNAL_ERROR', message: (err as Error).message };
  if (!(err instanceof NotifyError))
    log.error('release failed unexpectedly', { error: (err as Error).message, stack: (err as Error).stack });
  // Refused before the provider call: nothing was sent.
  if (body.code !== 'DELIVERY_UNKNOWN') return { state: 'failed', outcome: { error: body } };
  // DELIVERY_UNKNOWN: the pipeline recorded the delivery `unknown`, unless the dead release
  // recorded it before dying (then its record says how it went).
  const record = await deps.store.getDelivery(entry.id).catch(() => null);
  if (!record || record.status === 'unknown' || record.status === 'failed') return { state: 'unknown', outcome: { error: body } };
  return {
    state: 'released',
    outcome: {
      id: record.id,
      via: record.via,
      status: record.status,
      provider: record.provider,
      accepted_at: new Date(record.created_at).toISOString(),
    },
  };
}

/** Writes how the release ended on its entry (fenced by its owner) and logs it. */
async function finishEntry(
  deps: PipelineDeps,
  entry: OutboxEntry,
  owner: string,
  { state, outcome }: Ending,
  log: Logger,
): Promise<Released> {
  await finishRelease(deps, entry.id, owner, state, outcome, log);
  const code = state === 'released' ? undefined : (outcome as { error: { code: string } }).error.code;
  log.info('released', { state, ...(code === undefined ? {} : { code }) });
  return code === undefined ? { id: entry.id, state } : { id: entry.id, state, code };
}

/** Ends `owner`'s release in `state`; a store that is down gets the write again (./after-answer.ts). */
async function finishRelease(
  deps: PipelineDeps,
  id: string,
  owner: string,
  state: OutboxState,
  outcome: unknown,
  log: Logger,
): Promise<void> {
  await writeAfterAnswer(
    async () => {
      if (!(await deps.store.finishRelease(id, owner, state, outcome, deps.now())))
        log.warn('release outcome not stored: another process took the release over');
    },
    deps.config.sendBudgetMs,
    (err, again) => log.error(`release outcome not stored${again ? '; trying again' : ''}`, { error: err.message }),
  );
}

/**
 * Puts a claimed entry back to waiting until `dueAt`. Not held (the store failed, or another
 * process took the release over): its lease runs out and it is claimed again.
 */
async function holdAgain(
  deps: PipelineDeps,
  entry: OutboxEntry,
  owner: string,
  dueAt: number,
  congested: boolean,
  log: Logger,
  code?: string,
): Promise<Released> {
  const held = await deps.store.holdRelease(entry.id, owner, dueAt, deps.now(), congested).catch((e: unknown) => {
    log.error('release not held again', { error: (e as Error).message });
    return false;
  });
  log.info(held ? 'release held again' : 'release deferred', { ...(code ? { code } : {}), releaseAt: new Date(dueAt).toISOString() });
  if (held) deps.outbox?.wake(dueAt);
  return { id: entry.id, state: held ? 'held' : 'releasing', ...(code ? { code } : {}) };
}

/**
 * One pass: claims what is due at `now` and releases it, claiming more while releases are in
 * flight, so that one provider call hanging within its budget holds up nothing else: once half
 * the batch has ended the free half is claimed, and once the store has nothing more due it is
 * asked again every RECLAIM_MS until the last release ends. Expired entries are logged.
 */
export async function releaseDue(
  deps: PipelineDeps,
  opts: {
    limit?: number;
    id?: string /** False once the process is stopping: the releases in flight end, no more is claimed. */;
    claiming?: () => boolean;
  } = {},
): Promise<Released[]> {
  const time = deps.config.time ?? DEFAULT_TIME;
  const owner = randomUUID();
  const out: Released[] = [];
  const limit = opts.limit ?? (deps.channels.some((c) => c.live) ? LIVE_BATCH : BATCH);
  const inflight = new Set<Promise<void>>();
  let failure: { err: unknown } | undefined;
  // When a claim last found less than it asked for.
  let drainedAt: number | undefined;
  for (;;) {
    const room = limit - inflight.size;
    const lookAgain =
      (opts.claiming?.() ?? true) && (drainedAt === undefined || (opts.id === undefined && Date.now() - drainedAt >= RECLAIM_MS));
    if (lookAgain && room >= Math.ceil(limit / 2)) {
      const claim = await deps.store.claimDue(deps.now(), {
        limit: room,
        owner,
        leaseMs: leaseMs(deps),
        graceMs: time.graceMs,
        ...(opts.id ? { id: opts.id } : {}),
      });
      for (const e of claim.expired) {
        deps.log.warn('scheduled send expired', {
          notificationId: e.id,
          via: e.via,
          client: e.client,
          dueAt: new Date(e.due_at).toISOString(),
        });
        if (e.approved_sha256 !== undefined) await expireApproved(deps, e.id);
        out.push({ id: e.id, state: 'expired' });
      }
      // Escalation steps whose first send was answered before their claim: nothing is sent.
      for (const e of claim.cancelled ?? []) {
        deps.log.info('escalation step cancelled: answered', { notificationId: e.id, via: e.via, escalates: e.escalates });
        out.push({ id: e.id, state: 'cancelled' });
      }
      const batch = recordBatch(deps, owner);
      for (const e of claim.due) {
        const p: Promise<void> = releaseEntry(deps, e, owner, batch)
          .then(
            (r) => void out.push(r),
            (err: unknown) => void (failure ??= { err }),
          )
          .finally(() => inflight.delete(p));
        inflight.add(p);
      }
      drainedAt = opts.id !== undefined || claim.due.length + claim.expired.length < room ? Date.now() : undefined;
    }
    if (failure) throw failure.err;
    if (inflight.size === 0 && (drainedAt !== undefined || !lookAgain)) return out;
    let timer: NodeJS.Timeout | undefined;
    const reclaim =
      drainedAt === undefined || opts.id !== undefined
        ? []
        : [new Promise<void>((r) => (timer = setTimeout(r, drainedAt! + RECLAIM_MS - Date.now())))];
    await Promise.race([...inflight, ...reclaim]);
    clearTimeout(timer);
  }
}

/**
 * An approved send whose entry expired before it could leave (its processes were down, or the
 * store, longer than the grace): its row, still `approved`, says `expired` too, or it would
 * read as leaving for good.
 */
async function expireApproved(deps: PipelineDeps, id: string): Promise<void> {
  const row = await deps.store.getDelivery(id).catch(() => null);
  if (row?.status !== 'approved') return;
  await recordReleaseOrLog(deps, { ...row, status: 'expired', status_updated_at: deps.now() }, 'expired approved send not recorded');
}

/** Releases one waiting entry now if it is due (a held send someone made due); undefined when it was not claimable. */
export async function releaseNow(deps: PipelineDeps, id: string): Promise<Released | undefined> {
  return (await releaseDue(deps, { id }))[0];
}

/**
 * Takes a waiting send back: of a retract and a release racing, exactly one wins (one
 * conditional write each on the row). `cancelled`: this call took it back, nothing will be
 * sent; `not_waiting`: it had left already (or was cancelled before), `state` says where.
 */
export async function cancelWaiting(
  deps: Pick<PipelineDeps, 'store' | 'now'>,
  id: string,
  by?: AuditActor,
): Promise<{ kind: 'cancelled'; entry: OutboxEntry } | { kind: 'not_waiting'; entry: OutboxEntry } | { kind: 'not_found' }> {
  const withdrawn = await withdrawApproved(deps, id, by);
  if (withdrawn) return { kind: 'cancelled', entry: withdrawn };
  const moved = await deps.store.moveWaiting(id, statesTaking('cancel'), 'cancelled', deps.now(), by);
  if (!moved) return { kind: 'not_found' };
  if (!moved.moved) return { kind: 'not_waiting', entry: moved.entry };
  return { kind: 'cancelled', entry: moved.entry };
}

/**
 * An approved send not yet released, withdrawn: its entry cancelled and its row `retracted`
 * in one write (./edit.ts takes one back the same way). Undefined when it is no such send, or
 * its release claimed it first (the caller's move then says where it stands).
 */
async function withdrawApproved(
  deps: Pick<PipelineDeps, 'store' | 'now'>,
  id: string,
  by: AuditActor | undefined,
): Promise<OutboxEntry | undefined> {
  const entry = await deps.store.getOutboxEntry(id);
  if (entry?.approved_sha256 === undefined) return undefined;
  const record = await deps.store.getDelivery(id);
  const step = record && advance(record.status, 'retracted');
  if (!record || !step?.ok) return undefined;
  const at = deps.now();
  const amend = { status: step.next, payload: record.payload, provider_status: 'deleted', at, ...(by ? { by } : {}) };
  return (await deps.store.takeBackApproved(id, { amend }, at, by)) ? { ...entry, state: 'cancelled', finished_at: at } : undefined;
}
