import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { readTwilioReceipt, statusCallbackFor } from './receipts.js';

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
    expect(reading).toEqual({
      verified: true,
      report: { providerMessageId: 'SM1', event: 'delivered', providerStatus: 'delivered', code: null },
    });
  });

  it('reads our notification id from the StatusCallback query, which the signature covers', async () => {
    const id = 'ntf_' + 'a'.repeat(32);
    const url = statusCallbackFor(URL_, id);
    const params = { MessageSid: 'SM1', MessageStatus: 'sent' };
    const cb = {
      search: new URL(url).search,
      headers: { 'x-twilio-signature': twilio.getExpectedTwilioSignature(TOKEN, url, params) },
      body: new URLSearchParams(params).toString(),
    };
    expect(await readTwilioReceipt(TOKEN, URL_, cb)).toEqual({
      verified: true,
      report: { providerMessageId: 'SM1', event: 'sent', providerStatus: 'sent', code: null, notificationId: id },
    });
    // Another id in the query than the one signed: refused.
    expect(await readTwilioReceipt(TOKEN, URL_, { ...cb, search: `?notification=ntf_${'b'.repeat(32)}` })).toEqual({ verified: false });
    // Signed without the query, posted with it: refused.
    const bare = { ...cb, headers: { 'x-twilio-signature': twilio.getExpectedTwilioSignature(TOKEN, URL_, params) } };
    expect(await readTwilioReceipt(TOKEN, URL_, bare)).toEqual({ verified: false });
  });
});
