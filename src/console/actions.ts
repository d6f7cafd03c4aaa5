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
import type { BannerRecord, DeliveryQuery, DeliveryRecord, OutboxEntry } from '../store/types.js';
import { APPROVAL_ROWS } from './approvals-page.js';

/** A tool's answer as the console shows it: its structured result, or its coded error's message. */
export type ToolOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; code: string; message: string };

/** Waiting sends shown at once on the waiting page. */
const PENDING_ROWS = 200;

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
    async list(query: DeliveryQuery): Promise<DeliveryRecord[]> {
      await expireHeld(app);
      return app.store.findDeliveries(query);
    },
    get: (id: string) => app.store.getDelivery(id),
    audit: (id: string) => app.store.auditFor(id),
    /** A page of held sends, newest first, after the one named (the last of the page before). */
    async pending(after?: string): Promise<DeliveryRecord[]> {
      await expireHeld(app);
      return app.store.findDeliveries({ status: 'pending_approval', limit: APPROVAL_ROWS, ...(after ? { after } : {}) });
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
