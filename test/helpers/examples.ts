/**
 * Every channel offered with nothing configured and its valid calls, from each channel
 * module's `examples`: the schema, validator and e2e suites loop over these, so a new channel
 * is in them all. (A channel offered only once configured, webhook without a target, is not.)
 */
import { loadConfig } from '../../src/config/config.js';
import { channelToolName, notificationDef } from '../../src/channels/send-union.js';

const CHANNELS = loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' }).channels.map((c) => c.channel);

export type Call = Readonly<Record<string, unknown>>;

/** Channel names, in registry order. */
export const CHANNEL_NAMES: readonly string[] = CHANNELS.map((c) => c.name);

/** The per-channel profile's send tools, in order. */
export const CHANNEL_TOOLS: readonly string[] = CHANNEL_NAMES.map(channelToolName);

/** Valid calls by channel name. */
export const VALID_EXAMPLES: Readonly<Record<string, readonly Call[]>> = Object.fromEntries(CHANNELS.map((c) => [c.name, c.examples]));

export const ALL_VALID: readonly Call[] = CHANNELS.flatMap((c): readonly Call[] => c.examples);

/** The simplest valid call of each channel. */
export const FIRST_EXAMPLES: readonly Call[] = CHANNELS.map((c) => c.examples[0]!);

/** Each channel's own fields (idempotency_key included), as the union lists them. */
export const CHANNEL_FIELDS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  notificationDef(loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' }).channels).variants.map((v) => [v.value, v.fields]),
);
