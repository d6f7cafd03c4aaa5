/**
 * What the console reads and does, on the same store, pipeline and tools as an agent's
 * calls: a banner is shown or dismissed by the show_banner and dismiss_banner tools
 * themselves (their validation, records and fan-out), and a held send is decided by
 * decideHeld (the pipeline's release), and a waiting send is taken back by the outbox's
 * cancelWaiting. Nothing here is a second path.
 */
import type { App } from '../mcp/server.js';
import { decideHeld, expireHeld, type HeldDecision, type HeldOutcome } from '../notification/held.js';
import { cancelWaiting, WAITING_STATES } from '../notification/outbox.js';
import type { BannerRecord, DeliveryListing, DeliveryQuery, DeliveryRecord, OutboxEntry } from '../store/types.js';
import { APPROVAL_ROWS } from './approvals-page.js';
import { headStrings } from './json-head.js';

/** A tool's answer as the console shows it: its structured result, or its coded error's message. */
export type ToolOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; code: string; message: string };

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
    /** A page of the list, each row read as far as the list shows it. */
    async list(query: DeliveryQuery): Promise<DeliveryRecord[]> {
      await expireHeld(app);
      return (await app.store.findListings(query, { payloadChars: LIST_PAYLOAD_CHARS, approval: false })).map(withHead);
    },
    get: (id: string) => app.store.getDelivery(id),
    audit: (id: string) => app.store.auditFor(id),
    /** A page of held sends, newest first, after the one named (the last of the page before). */
    async pending(after?: string): Promise<DeliveryRecord[]> {
      await expireHeld(app);
      // The payload whole (its cards list every part), the held call left in the store.
      return (await app.store.findListings({ status: 'pending_approval', limit: APPROVAL_ROWS, ...(after ? { after } : {}) }, { payloadChars: WHOLE, approval: true })).map((l) => l.record);
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
