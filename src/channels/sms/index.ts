import { countSegments } from './segments.js';
import type { SmsNotification } from '../union.js';
import type { Channel } from '../channel.js';
import type { SmsPayload } from './twilio.js';

export const smsChannel: Channel<SmsNotification, SmsPayload> = {
  recipients: (n) => [n.to],

  async buildPayload(n, { config }) {
    const payload: SmsPayload = { To: n.to, Body: n.body };
    if (config.sms.messagingServiceSid) payload.MessagingServiceSid = config.sms.messagingServiceSid;
    else if (config.sms.from) payload.From = config.sms.from;
    const { segments, encoding } = countSegments(n.body);
    return { payload, meta: { segments, encoding } };
  },
};
