/**
 * The channels this server offers: the one list. Whatever names channels is assembled from
 * it: the union and its description, the output schema's `via` enum, the per-channel tools,
 * the server instructions, metrics labels, the configuration each channel reads, and the
 * test fixtures that loop over channels. A channel is its module (./<name>/) plus one line
 * here; `loadConfig(env, channels)` takes another list (an embedder's, or a test's).
 */
import type { CallOfChannel, Channel } from './channel.js';
import { email } from './email/index.js';
import { slack } from './slack/index.js';
import { sms } from './sms/index.js';
import { webhook } from './webhook/index.js';

export const CHANNELS = [email, sms, slack, webhook] as const satisfies readonly Channel[];

/** The name of a built-in channel: the `via` of its calls. */
export type Via = (typeof CHANNELS)[number]['name'];

/** A call of a built-in channel, as the union validated it. */
export type Notification = CallOfChannel<(typeof CHANNELS)[number]>;
