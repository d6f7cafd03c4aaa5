import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { readTwilioInbound } from './inbound.js';

const TOKEN = 'inbound-test-token';
const URL_ = 'https://notify.example/webhooks/twilio/inbound';

const signed = (params: Record<string, string>, token = TOKEN) => ({
  search: '',
  headers: { 'x-twilio-signature': twilio.getExpectedTwilioSignature(token, URL_, params) },
  body: new URLSearchParams(params).toString(),
});
const read = (params: Record<string, string>, token = TOKEN) => readTwilioInbound(TOKEN, URL_, signed(params, token));
const from = '+14155550123';

describe('readTwilioInbound', () => {
  it('reads an opt-out word as an opt-out, whatever its case and spaces, never as a code', async () => {
    for (const body of ['STOP', ' stop ', 'Stop All', 'unsubscribe', 'QUIT', 'optout']) {
      const reading = await read({ From: from, Body: body });
      expect(reading, body).toMatchObject({ verified: true, reply: { kind: 'opt_out', from } });
    }
  });

  it("takes Twilio's OptOutType=STOP for a keyword of the operator's own", async () => {
    expect(await read({ From: from, Body: 'ARRET', OptOutType: 'STOP' })).toMatchObject({ reply: { kind: 'opt_out', word: 'ARRET' } });
    expect(await read({ From: from, Body: 'START', OptOutType: 'START' })).toMatchObject({ reply: { kind: 'code', code: null } });
  });

  it('reads a digit as its code and other text as none; a sender not in E.164 is no reply', async () => {
    expect(await read({ From: from, Body: '2' })).toMatchObject({ reply: { kind: 'code', from, code: 2 } });
    expect(await read({ From: from, Body: 'yes' })).toMatchObject({ reply: { kind: 'code', code: null } });
    expect(await read({ From: 'whatsapp:+14155550123', Body: '1' })).toMatchObject({ verified: true, reply: null });
  });

  it('is not verified under another token, without a signature, or without credentials', async () => {
    expect(await read({ From: from, Body: 'STOP' }, 'other-token')).toMatchObject({ verified: false });
    expect(await readTwilioInbound(TOKEN, URL_, { search: '', headers: {}, body: 'From=%2B1&Body=1' })).toMatchObject({ verified: false });
    expect(await readTwilioInbound(undefined, URL_, signed({ From: from, Body: '1' }))).toMatchObject({ verified: false });
  });
});
