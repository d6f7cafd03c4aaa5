/**
 * send_notification's union, assembled from the configured channels, in registry order.
 * Every wire shape, the description and the validator are generated from it (@notify-mcp/union).
 */
import { z } from 'zod';
import { defineUnion, listWords, type UnionDef } from '@notify-mcp/union';
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
    intro: 'Sends one notification.',
    outro:
      // Each rule once, in its fewest words. What the answer says where it is read is not said
      // here: a refusal names its code and the variable to set (the allowlist's), and a sent
      // result carries sent_means (what "sent" means on its channel).
      'Within 24 h the same key and payload returns the first result, sending nothing; another payload is refused. ' +
      'Channels without credentials run in dry-run. ' +
      'send_at answers scheduled; quiet hours may answer held, until release_at. ' +
      `get_notification shows later states${receiptsNote(channels)}.` +
      (approval === undefined ? '' : ` ${approval}`),
    variantNoun: 'channel',
    variantToolName: channelToolName,
    nestedKey: 'notification',
    // A Slack block as JSON text in every shape: clients that make flat or per-channel strict
    // themselves (OpenAI Agents) refuse an open object and fall back to non-strict.
    freeForm: 'json-text',
    // Each channel's words for the string formats its fields use (the email address format).
    formats: Object.assign({}, ...channels.map((c) => c.channel.formats)),
  });
}

/** Channels whose provider reports delivery later (receipts): ` (SMS: delivered or undelivered)`. */
function receiptsNote(channels: readonly ConfiguredChannel[]): string {
  const reporting = channels.filter((c) => c.receipts).map((c) => c.channel.label);
  return reporting.length ? ` (${listWords(reporting)}: delivered or undelivered)` : '';
}
