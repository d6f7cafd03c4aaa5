/**
 * What the console reads and does, on the same store, pipeline and tools as an agent's
 * calls: a banner is shown or dismissed by the show_banner and dismiss_banner tools
 * themselves (their validation, records and fan-out), and a held send is decided by
 * decideHeld (the pipeline's release), and a waiting send is taken back by the outbox's
 * cancelWaiting. Nothing here is a second path.
 */
import type { App } from '../mcp/server.js';
import { offeredGroups, toolOffered } from '../mcp/tool-groups.js';
import { decideHeld, expireHeld, type HeldDecision, type HeldOutcome } from '../notification/held.js';
import { cancelWaiting, WAITING_STATES } from '../notification/outbox.js';
import { errors } from '../core/errors.js';
import type { BannerRecord, DeliveryListing, DeliveryQuery, DeliveryRecord, OutboxEntry, OutboxState } from '../store/types.js';
import { APPROVAL_ROWS } from './approvals-page.js';
import { headStrings } from './json-head.js';
import type { ListRow } from './notifications-page.js';

/** A tool's answer as the console shows it: its structured result, or its coded error's message. */
export type ToolOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; code: string; message: string };

/** Statuses a send may have in the outbox alone (no delivery record yet, or ever). */
const OUTBOX_STATUSES: readonly string[] = ['scheduled', 'held', 'cancelled', 'expired', 'failed', 'unknown'] satisfies OutboxState[];

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

export function consoleActions(app: App) {
  /** Calls one of the server's own tools as operator `client`, exactly as tools/call would. */
  async function callTool(name: string, args: Record<string, unknown>, client: string): Promise<ToolOutcome> {
    const entry = app.catalog.flat.entries.get(name);
    if (!entry) throw new Error(`no tool ${name}`);
    // The operator's own offer (NOTIFY_TOOLS, NOTIFY_TOKEN_TOOLS), as over MCP: the route hides what this refuses.
    if (!toolOffered(name, offeredGroups(app.config, client)))
      throw errors.notFound(`This server does not offer ${name} to ${client}.`, {});
    const result = await app.track(
      entry.call(args, {
        deps: app,
        store: app.store,
        config: app.config,
        log: app.log.child({ tool: name, client, via_console: true }),
        client,
        operator: true,
        now: app.now,
        signal: new AbortController().signal,
      }),
    );
    const structured = (result.structuredContent ?? {}) as Record<string, unknown>;
    if (!result.isError) return { ok: true, result: structured };
    const error = (structured.error ?? {}) as { code?: string; message?: string };
    return { ok: false, code: error.code ?? 'INTERNAL_ERROR', message: error.message ?? 'The call failed.' };
  }

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
    /**
     * The delivery log, each row read as far as the list shows it, and the sends the outbox
     * holds without a record (scheduled, held, cancelled…), merged newest first; at one time,
     * records first. `after` is the last row of the page before, of either kind.
     */
    async list(query: DeliveryQuery): Promise<ListRow[]> {
      await expireHeld(app);
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
      const rows: ListRow[] = [];
      let i = 0;
      let j = 0;
      while (rows.length < query.limit && (i < recorded.length || j < unrecorded.length)) {
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
    },
    get: (id: string) => app.store.getDelivery(id),
    /** A send the outbox holds without a delivery record (waiting, or taken back before it left). */
    async unrecorded(id: string): Promise<{ entry: OutboxEntry; waiting: boolean } | null> {
      const entry = await app.store.getOutboxEntry(id);
      if (!entry || (await app.store.getDelivery(id))) return null;
      return { entry, waiting: WAITING_STATES.includes(entry.state) };
    },
    audit: (id: string) => app.store.auditFor(id),
    /** A page of held sends, newest first, after the one named (the last of the page before). */
    async pending(after?: string): Promise<DeliveryRecord[]> {
      await expireHeld(app);
      // The payload whole (its cards list every part), the held call left in the store.
      return (
        await app.store.findListings(
          { status: 'pending_approval', limit: APPROVAL_ROWS, ...(after ? { after } : {}) },
          { payloadChars: WHOLE, approval: true },
        )
      ).map((l) => l.record);
    },
    decide: (id: string, d: HeldDecision): Promise<HeldOutcome> => app.track(decideHeld(app, id, d)),
    async waiting(): Promise<OutboxEntry[]> {
      return (await app.store.listOutbox(WAITING_STATES, PENDING_ROWS)).sort((a, b) => a.due_at - b.due_at);
    },
    /**
     * The outbox's own retract, as a retract of a waiting send is everywhere: of it and a
     * release racing, one wins. The audit names the operator who took it back, not its sender.
     */
    retract: (id: string, operator: string) => app.track(cancelWaiting(app, id, { client: operator, tool: null })),
    activeBanners: (): Promise<BannerRecord[]> => app.store.listBanners({ status: 'active', now: app.now(), limit: 200 }),
    showBanner: (args: Record<string, unknown>, client: string) => callTool('show_banner', args, client),
    dismissBanner: (id: string, client: string) => callTool('dismiss_banner', { banner_id: id }, client),
  };
}

export type ConsoleActions = ReturnType<typeof consoleActions>;
