import type { Notification } from './union.js';
import { emailChannel } from './email/index.js';
import { slackChannel } from './slack/index.js';
import { smsChannel } from './sms/index.js';
import type { Channel } from './channel.js';

export type Via = Notification['via'];

/** Channel glue by `via`; the type makes a union branch without a channel a compile error. */
export const channels: { [V in Via]: Channel<Extract<Notification, { via: V }>, unknown> } = {
  email: emailChannel,
  sms: smsChannel,
  slack: slackChannel,
};

export function channelFor<N extends Notification>(n: N): Channel<N, unknown> {
  return channels[n.via] as unknown as Channel<N, unknown>;
}
