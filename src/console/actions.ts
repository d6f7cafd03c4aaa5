/**
 * What the console reads and does, on the same store and use cases as an agent's calls: a
 * banner is shown or dismissed by the banner use cases (src/banners/show.ts, dismiss.ts), as
 * the operator's tool offer allows and with the tools' input checks, a send awaiting approval
 * is decided by decideApproval (the pipeline's release), and a waiting send is taken back by
 * the outbox's cancelWaiting. Nothing here is a second path, and no MCP tool is called.
 */
import type { z } from 'zod';
import { describeValue, validateObject } from '@notify-mcp/union';
import { dismissBanner, dismissBannerInput } from '../banners/dismiss.js';
import { showBanner, showBannerInput, type BannerDeps } from '../banners/show.js';
import { errors, NotifyError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { unstorableRefusal } from '../core/storable-text.js';
import type { App } from '../mcp/server.js';
import { offeredGroups, toolOffered } from '../mcp/tool-groups.js';
import { decideApproval, expireAwaitingApproval, type ApprovalDecided, type ApprovalDecision } from '../notification/decide-approval.js';
import { questionState } from '../notification/answer.js';
import { cancelWaiting, WAITING_STATES } from '../notification/outbox.js';
import { MAX_AHEAD_MS } from '../notification/settings.js';
import { stopEscalation } from '../notification/stop-escalation.js';
import { StoreUnavailableError } from '../store/errors.js';
import type { BannerRecord, DeliveryListing, DeliveryQuery, DeliveryRecord, OutboxEntry, OutboxState } from '../store/types.js';
import { APPROVAL_ROWS } from './approvals-page.js';
import { headStrings } from './json-head.js';
import type { ListRow } from './notifications-page.js';
import type { OpenQuestion } from './questions-page.js';

/** A console action's answer as the page shows it: its result, or its coded refusal's message. */
export type ActionOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; code: string; message: string };

/** Statuses a send may have in the outbox alone (no delivery record yet, or ever). */
const OUTBOX_STATUSES: readonly string[] = ['scheduled', 'held', 'cancelled', 'expired', 'failed', 'unknown'] satisfies OutboxState[];

/** Open questions shown at once on the questions page. */
export const QUESTION_ROWS = 200;

/** Waiting sends shown at once on the waiting page. */
const PENDING_ROWS = 200;

/** How much of a payload's JSON a list row reads: enough for a mail's header section, however many recipients it names. */
const LIST_PAYLOAD_CHARS = 64 * 1024;
/** All of it: more than any payload a store holds. */
const WHOLE = 2_000_000_000;

/** A list row whose payload was cut: its top-level strings as far as they go (the subject, a post's first words). */
function withHead({ record, head }: DeliveryListing): DeliveryRecord {
  return head === null ? record : { ...record, payload: headStrings(head) };
}

/**
 * The delivery log, each row read as far as the list shows it, and the sends the outbox
 * holds without a record (scheduled, held, cancelled…), merged newest first; at one time,
 * records first. `after` is the last row of the page before, of either kind.
 */
async function listRows(app: App, query: DeliveryQuery): Promise<ListRow[]> {
  await expireAwaitingApproval(app);
  const { after, ...filters } = query;
  let records: DeliveryQuery = query;
  let before: { at: number; id: string | null } | undefined;
  if (after !== undefined) {
    const last = await app.store.getDelivery(after);
    const waiting = last ? null : await app.store.getOutboxEntry(after);
    // After a record: outbox rows at its time come after every record there. After an outbox row: only older records.
    if (last) before = { at: last.created_at + 1, id: null };
    else if (waiting) {
      before = { at: waiting.created_at, id: waiting.id };
      records = { ...filters, until: Math.min(filters.until ?? Infinity, waiting.created_at) };
    }
  }
  const outbox = filters.status === undefined || OUTBOX_STATUSES.includes(filters.status);
  const { status, ...rest } = filters;
  const [recorded, unrecorded] = await Promise.all([
    app.store.findListings(records, { payloadChars: LIST_PAYLOAD_CHARS, approval: false }).then((rows) => rows.map(withHead)),
    outbox && (after === undefined || before)
      ? app.store.findUnrecordedOutbox({ ...rest, ...(status ? { state: status as OutboxState } : {}), ...(before ? { before } : {}) })
      : [],
  ]);
  return mergeNewestFirst(recorded, unrecorded, query.limit);
}

/** Records and outbox rows, each newest first, merged newest first (at one time, records first), at most `limit`. */
function mergeNewestFirst(recorded: readonly DeliveryRecord[], unrecorded: readonly OutboxEntry[], limit: number): ListRow[] {
  const rows: ListRow[] = [];
  let i = 0;
  let j = 0;
  while (rows.length < limit && (i < recorded.length || j < unrecorded.length)) {
    const r = recorded[i];
    const w = unrecorded[j];
    if (r && (!w || r.created_at >= w.created_at)) {
      rows.push({ kind: 'record', id: r.id, record: r });
      i++;
    } else {
      rows.push({ kind: 'waiting', id: w!.id, entry: w! });
      j++;
    }
  }
  return rows;
}

/** The tools whose use cases a banner action runs: the operator's offer of them is the console's too. */
type BannerTool = 'show_banner' | 'dismiss_banner';

/**
 * A banner change as operator `client`, as the tool would make it: offered to them as the
 * tool is (NOTIFY_TOOLS, NOTIFY_TOKEN_TOOLS; the route hides what this refuses), its client
 * name and input checked as the tool checks them, then the use case; a refusal becomes the
 * message the page shows. Tracked, so a closing server finishes it.
 */
async function bannerAction<S extends z.ZodObject>(
  app: App,
  client: string,
  tool: BannerTool,
  input: { schema: S; args: Record<string, unknown> },
  run: (deps: BannerDeps, value: z.infer<S>) => Promise<object>,
): Promise<ActionOutcome> {
  if (!toolOffered(tool, offeredGroups(app.config, client))) throw errors.notFound(`This server does not offer ${tool} to ${client}.`, {});
  const log = app.log.child({ tool, client, via_console: true });
  const unstorable = unstorableRefusal(input.args, client);
  if (unstorable) return { ok: false, code: unstorable.code, message: unstorable.message };
  const checked = validateObject(input.schema, tool, input.args);
  if (!checked.ok) return { ok: false, code: checked.issues[0].code, message: checked.issues[0].message };
  try {
    return { ok: true, result: { ...(await app.track(run({ store: app.store, log, now: app.now }, checked.value))) } };
  } catch (err) {
    return refusal(err, log, tool);
  }
}

/** A use case's failure as the page shows it: a NotifyError's code and message; a store that is down, STORE_UNAVAILABLE; anything else a bug, logged. */
function refusal(err: unknown, log: Logger, tool: string): ActionOutcome {
  let body: { code: string; message: string };
  if (err instanceof NotifyError) body = err.toBody();
  else if (err instanceof StoreUnavailableError) {
    log.warn('store unavailable', { tool, store: err.store, reason: err.reason });
    body = errors.storeUnavailable(err.retryAfterS, undefined, err).toBody();
  } else {
    log.error('tool failed unexpectedly', { tool, error: err instanceof Error ? err.stack : describeValue(err) });
    body = errors.internalError().toBody();
  }
  return { ok: false, code: body.code, message: body.message };
}

export function consoleActions(app: App) {
  return {
    channels: app.channels.map((c) => c.name),
    /** What operator `client` may do with banners, by its tool groups: see them (list_banners), show and dismiss them. */
    bannerAccess(client: string): { see: boolean; change: boolean } {
      const groups = offeredGroups(app.config, client);
      return {
        see: toolOffered('list_banners', groups),
        change: toolOffered('show_banner', groups) && toolOffered('dismiss_banner', groups),
      };
    },
    list: (query: DeliveryQuery): Promise<ListRow[]> => listRows(app, query),
    get: (id: string) => app.store.getDelivery(id),
    /** A send the outbox holds without a delivery record (waiting, or taken back before it left). */
    async unrecorded(id: string): Promise<{ entry: OutboxEntry; waiting: boolean } | null> {
      const entry = await app.store.getOutboxEntry(id);
      if (!entry || (await app.store.getDelivery(id))) return null;
      return { entry, waiting: WAITING_STATES.includes(entry.state) };
    },
    audit: (id: string) => app.store.auditFor(id),
    question: (id: string) => questionState(app.store, { id }, app.now()),
    async openQuestions(): Promise<OpenQuestion[]> {
      const now = app.now();
      // Each is judged as the answer use case judges it; the store's read only leaves out those
      // that cannot be open: life counts from when the message left, at most this long after it was asked.
      const horizon = MAX_AHEAD_MS + 86_400_000 + app.config.approval.ttlMs;
      const rows = await app.store.openQuestions(now - horizon, QUESTION_ROWS);
      const states = await Promise.all(rows.map((q) => questionState(app.store, { id: q.notification_id }, now)));
      return states.filter((s): s is OpenQuestion => s.kind === 'open' || s.kind === 'not_sent');
    },
    /** A page of sends awaiting approval, newest first, after the one named (the last of the page before). */
    async pending(after?: string): Promise<DeliveryRecord[]> {
      await expireAwaitingApproval(app);
      // The payload whole (its cards list every part), the held call left in the store.
      const query = { status: 'pending_approval' as const, limit: APPROVAL_ROWS, ...(after ? { after } : {}) };
      return (await app.store.findListings(query, { payloadChars: WHOLE, approval: true })).map((l) => l.record);
    },
    decide: (id: string, d: ApprovalDecision): Promise<ApprovalDecided> => app.track(decideApproval(app, id, d)),
    async waiting(): Promise<OutboxEntry[]> {
      return (await app.store.listOutbox(WAITING_STATES, PENDING_ROWS)).sort((a, b) => a.due_at - b.due_at);
    },
    /**
     * The outbox's own retract, as a retract of a waiting send is everywhere: of it and a
     * release racing, one wins. The audit names the operator who took it back, not its sender.
     */
    retract: (id: string, operator: string) => app.track(cancelWaiting(app, id, { client: operator, tool: null })),
    /** The steps of a first send's escalation (none when it escalates nothing). */
    escalation: (id: string) => app.store.escalationSteps(id),
    /** Cancels the steps still waiting, as retract_notification on the first send does; the audit names the operator. */
    stopEscalation: (id: string, operator: string) => app.track(stopEscalation(app, id, { client: operator, tool: null })),
    activeBanners: (): Promise<BannerRecord[]> => app.store.listBanners({ status: 'active', now: app.now(), limit: 200 }),
    showBanner: (args: Record<string, unknown>, client: string) =>
      bannerAction(app, client, 'show_banner', { schema: showBannerInput, args }, showBanner),
    dismissBanner: (id: string, client: string) =>
      bannerAction(app, client, 'dismiss_banner', { schema: dismissBannerInput, args: { banner_id: id } }, (deps, v) =>
        dismissBanner(deps, v.banner_id),
      ),
  };
}

export type ConsoleActions = ReturnType<typeof consoleActions>;
