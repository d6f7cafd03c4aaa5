import { neutraliseBroadcasts } from './mentions.js';
import type { SlackNotification } from '../union.js';
import type { Channel } from '../channel.js';
import type { SlackPayload } from './web-api.js';

export const slackChannel: Channel<SlackNotification, SlackPayload> = {
  recipients: (n) => [n.channel],

  async buildPayload(n, { config }) {
    // Broadcast mentions need the operator's consent (DESIGN section 3).
    const text = config.slack.allowBroadcast ? n.text : neutraliseBroadcasts(n.text).text;
    const payload: SlackPayload = { channel: n.channel, text };
    if (n.thread) payload.thread_ts = n.thread;
    return { payload };
  },
};
