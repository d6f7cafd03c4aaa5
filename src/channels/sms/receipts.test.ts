import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { readTwilioReceipt } from './receipts.js';

const TOKEN = 'receipts-test-token';
const URL_ = 'https://notify.example/webhooks/twilio';

const signed = (params: Record<string, string>) => ({
  search: '',
  headers: { 'x-twilio-signature': twilio.getExpectedTwilioSignature(TOKEN, URL_, params) },
  body: new URLSearchParams(params).toString(),
});

describe('readTwilioReceipt', () => {
  it('reads a status named like an Object.prototype member as no report, not an event', async () => {
    for (const status of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const reading = await readTwilioReceipt(TOKEN, URL_, signed({ MessageSid: 'SM1', MessageStatus: status }));
      expect(reading, status).toEqual({ verified: true, report: null });
    }
  });

  it('reads a known status case-insensitively', async () => {
    const reading = await readTwilioReceipt(TOKEN, URL_, signed({ MessageSid: 'SM1', MessageStatus: 'Delivered' }));
    expect(reading).toEqual({ verified: true, report: { providerMessageId: 'SM1', event: 'delivered', providerStatus: 'delivered', code: null } });
  });
});
