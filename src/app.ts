/**
 * The long-lived parts of a running server, shared by every connection: configuration,
 * store, providers and the tool catalog. Transports create one MCP server per connection
 * on top of this (src/mcp/server.ts).
 */
import { randomBytes } from 'node:crypto';
import { buildCatalog } from './mcp/catalog.js';
import { answerLinker } from './core/answer-token.js';
import { closeChannels, connectChannels } from './channels/connect.js';
import type { Config } from './config/config.js';
import type { Logger } from './core/log.js';
import { createApprovalCodec } from './mcp/approval-round.js';
import type { App } from './mcp/server.js';
import type { PipelineDeps, RateGate } from './notification/pipeline.js';
import { answerWaits } from './notification/answer-waits.js';
import { approvalNotifier } from './notification/approval-notice.js';
import { startOutboxRunner } from './notification/outbox-runner.js';
import { createRateGate } from './policy/rate-limit.js';
import { createCapGate } from './policy/caps.js';
import type { Provider } from './providers/types.js';
import { openStore, sqliteFile } from './store/index.js';
import type { Store } from './store/types.js';

export type { App } from './mcp/server.js';

export interface AppOverrides {
  store?: Store;
  /** Providers by channel name, in place of the configured ones (tests). */
  providers?: Readonly<Record<string, Provider<unknown>>>;
  now?: () => number;
  rateGate?: RateGate;
  /** Without the release loop (tests that drive releaseDue themselves). */
  noOutboxRunner?: boolean;
}

/** NOTIFY_APPROVAL_NOTIFY: each send held for a person posts a notice, tracked so a closing server finishes it; never awaited by the send. */
function awaitingApprovalHook(
  config: Config,
  deps: PipelineDeps,
  track: <T>(call: Promise<T>) => Promise<T>,
): PipelineDeps['onAwaitingApproval'] {
  const target = config.approval.notify;
  if (!target) return undefined;
  const notify = approvalNotifier(deps, target, config.channels.find((c) => c.name === target.via)!.channel);
  return (awaiting) => void track(notify(awaiting));
}

export async function createApp(config: Config, log: Logger, overrides: AppOverrides = {}): Promise<App> {
  const store = overrides.store ?? (await openStore(config, log));
  // The store's one answer key: every replica derives the same answer links from it.
  const answerKey = config.publicUrl ? await store.answerKey(randomBytes(32).toString('base64url')) : undefined;
  const links = config.publicUrl && answerKey ? answerLinker(config.publicUrl, answerKey) : undefined;
  const channels = await connectChannels(config, log, overrides.providers, links);
  // Built in order, each part whole when made: the send path's own parts, the hook that
  // notifies approvers (its notices are never held or scheduled, so it needs neither), the
  // release loop over both, and last the deps every call sees, the loop as their outbox.
  const base = {
    config,
    store,
    channels,
    log,
    now: overrides.now ?? Date.now,
    // Counted in the store, so processes sharing it share the limits (src/policy/rate-limit.ts).
    rateGate: overrides.rateGate ?? createRateGate(config.rateLimits, store),
    capGate: createCapGate(config.caps, store),
    ...(answerKey ? { answerKey } : {}),
  };
  const inflight = new Set<Promise<unknown>>();
  const track = <T>(call: Promise<T>): Promise<T> => {
    inflight.add(call);
    void call.finally(() => inflight.delete(call)).catch(() => {});
    return call;
  };
  const onAwaitingApproval = awaitingApprovalHook(config, base, track);
  // Every server releases what is due, so a scheduled send leaves while any replica runs.
  const runner = overrides.noOutboxRunner ? undefined : startOutboxRunner({ ...base, onAwaitingApproval });
  const deps: PipelineDeps & { config: Config; store: Store } = { ...base, onAwaitingApproval, ...(runner ? { outbox: runner } : {}) };
  // Built per profile when a client first asks for it; its hashes are logged then.
  const catalog = buildCatalog(config, undefined, (profile, c) =>
    log.info('tool list', { profile, fingerprint: c.fingerprint, tools: c.hashes }),
  );
  log.info('channels', {
    ...Object.fromEntries(channels.map((c) => [c.name, c.live ? 'live' : 'dry-run'])),
    store: store.kind,
    ...(store.kind === 'sqlite' ? { file: sqliteFile(config.dataDir) } : {}),
  });
  const drain = async (timeoutMs = config.sendBudgetMs + 1_000) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled([...inflight]).then(() => undefined), timeout]);
    clearTimeout(timer);
  };
  const waits = answerWaits(store, { onError: (err) => log.warn('answer wait poll failed', { error: String(err) }) });
  let closing: Promise<void> | undefined;
  return {
    ...deps,
    catalog,
    approvalCodec: createApprovalCodec(config.approval.key),
    answerWaits: waits,
    track,
    drain,
    close() {
      closing ??= (async () => {
        await runner?.stop();
        waits.close();
        await drain();
        await closeChannels(channels);
        await store.close();
      })();
      return closing;
    },
  };
}
