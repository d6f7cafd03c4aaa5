/**
 * send_notification's union, assembled from the configured channels, in registry order.
 * Every wire shape, the description and the validator are generated from it (@notify-mcp/union).
 */
import { z } from 'zod';
import { defineUnion, type UnionDef } from '@notify-mcp/union';
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
    // send_notification says it: the description starts with what to set.
    intro: '',
    outro:
      // Each rule once, in its fewest words. What the answer says where it is read is not said
      // here: a refusal names its code and the variable to set (the allowlist's), a sent
      // result carries sent_means (what "sent" means on its channel), a send held by quiet
      // hours answers held with its release_at, and get_notification's own description says
      // which channels report delivery later.
      // A channel without credentials answers dry_run, and its result says so where it is read.
      'Same key ≤24 h: sent once; other payload refused.' + (approval === undefined ? '' : ` ${approval}`),
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
