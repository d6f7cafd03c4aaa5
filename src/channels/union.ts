/**
 * send_notification's union, assembled from the configured channels, in registry order.
 * Every wire shape, the description and the validator are generated from it (src/union).
 */
import { z } from 'zod';
import { defineUnion, listWords, type UnionDef } from '../union/index.js';
import type { ConfiguredChannel } from './channel.js';

/** The polymorphic tool. */
export const SEND_TOOL = 'send_notification';

/** One channel's own tool under the per-channel profile. */
export function channelToolName(via: string): string {
  return `send_${via}`;
}

export function notificationUnion(channels: readonly ConfiguredChannel[]) {
  const [first, ...rest] = channels.map((c) => c.branch);
  if (!first) throw new Error('no channel is registered: the union needs at least one');
  return z.discriminatedUnion('via', [first, ...rest]);
}

/** `approval`: the description's sentence on when a person is asked (none without approval rules). */
export function notificationDef(channels: readonly ConfiguredChannel[], approval?: string): UnionDef {
  return defineUnion(notificationUnion(channels), {
    toolName: SEND_TOOL,
    title: 'Send notification',
    intro: `Sends one notification by ${listWords(channels.map((c) => c.channel.label), 'or')}.`,
    outro:
      'idempotency_key: the same key and payload within 24 h returns the first result and sends nothing again; a different payload under that key is IDEMPOTENCY_CONFLICT. Channels without credentials run in dry-run. ' +
      `status sent means, by channel: ${channels.map((c) => `${c.channel.label}: ${c.channel.sentMeans}`).join(' ')} ` +
      'get_notification({ id }) shows later states.' +
      (approval === undefined ? '' : ` ${approval}`),
    variantNoun: 'channel',
    variantToolName: channelToolName,
    nestedKey: 'notification',
    // Each channel's words for the string formats its fields use (the email address format).
    formats: Object.assign({}, ...channels.map((c) => c.channel.formats)),
  });
}
