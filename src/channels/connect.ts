/**
 * Every configured channel with its provider: live when the channel's credentials are set,
 * dry-run otherwise. A live channel's SDK is imported by its module's createProvider, so a
 * dry-run start loads none.
 */
import type { AnswerLinker } from '../core/answer-token.js';
import type { Logger } from '../core/log.js';
import type { Provider } from '../providers/types.js';
import type { ConfiguredChannel, ConnectedChannel } from './channel.js';

/** A single request may take this long; the send's budget may end the wait sooner. */
const HTTP_TIMEOUT_MS = 15_000;

/** What connecting the channels needs of the configuration. */
export interface ConnectSettings {
  channels: readonly ConfiguredChannel[];
  /** Requests in flight at once per provider. */
  providerConcurrency: number;
  sendBudgetMs: number;
}

/**
 * `providers`: replacements by channel name (tests); they are not closed by the channel.
 * `links`: the answer links of calls that ask (the store's answer key; app.ts).
 */
export async function connectChannels(
  config: ConnectSettings,
  log: Logger,
  providers: Readonly<Record<string, Provider<unknown>>> = {},
  links?: AnswerLinker,
): Promise<ConnectedChannel[]> {
  const ctx = { log, maxConcurrent: config.providerConcurrency, requestTimeoutMs: Math.min(HTTP_TIMEOUT_MS, config.sendBudgetMs) };
  const settled = await Promise.allSettled(config.channels.map((c) => c.connect(ctx, providers[c.name], links)));
  const connected = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failure = settled.find((r) => r.status === 'rejected');
  if (failure) {
    // Close what did connect, so a failed start leaves no pool open.
    await closeChannels(connected);
    throw failure.reason;
  }
  return connected;
}

export async function closeChannels(channels: readonly ConnectedChannel[]): Promise<void> {
  await Promise.allSettled(channels.map((c) => c.close()));
}
