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
      'Within 24 h the same key and payload returns the first result, sending nothing; another payload is IDEMPOTENCY_CONFLICT. ' +
      'Live channels send only to recipients the operator allows; channels without credentials run in dry-run. ' +
      `status sent means: ${channels.map((c) => sentBriefly(c.channel)).join('; ')}. ` +
      'send_at answers scheduled at once and sends then; quiet hours may answer held, with release_at. ' +
      `get_notification shows later states${receiptsNote(channels)}.` +
      (approval === undefined ? '' : ` ${approval}`),
    variantNoun: 'channel',
    variantToolName: channelToolName,
    nestedKey: 'notification',
    // Each channel's words for the string formats its fields use (the email address format).
    formats: Object.assign({}, ...channels.map((c) => c.channel.formats)),
  });
}

/** A channel's `sentMeans` in a few words, its first clause: `email, the SMTP relay accepted the mail`. */
function sentBriefly({ label, sentMeans }: ConfiguredChannel['channel']): string {
  const clause = sentMeans.split(/[;.]/)[0]!.trim();
  return clause.startsWith(`${label} `) ? clause : `${label}, ${clause.replace(/^The /, 'the ')}`;
}

/** Channels whose provider reports delivery later (receipts): ` (SMS: delivered or undelivered)`. */
function receiptsNote(channels: readonly ConfiguredChannel[]): string {
  const reporting = channels.filter((c) => c.receipts).map((c) => c.channel.label);
  return reporting.length ? ` (${listWords(reporting)}: delivered or undelivered)` : '';
}
