import type { SlackPayload } from '../../providers/types.js';
import type { SlackNotification } from '../union.js';
import type { Channel } from './types.js';

export const slackChannel: Channel<SlackNotification, SlackPayload> = {
  recipients: (n) => [n.channel],

  async buildPayload(n) {
    const payload: SlackPayload = { channel: n.channel, text: n.text };
    if (n.thread) payload.thread_ts = n.thread;
    return { payload };
  },
};
