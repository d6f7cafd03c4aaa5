/**
 * Twilio's inbound-message webhook (the number's "A message comes in" URL,
 * NOTIFY_PUBLIC_URL/webhooks/twilio/inbound): a reply to a question, or an opt-out. Verified
 * with the twilio package's validateRequest, as the status callbacks are (./receipts.ts). An
 * opt-out word is an opt-out, never an answer. Answered with empty TwiML: this server sends no
 * reply of its own.
 */
import type { InboundCallback, InboundReading } from '../inbound.js';
import { replyCode } from './reply-codes.js';

/** Where Twilio posts incoming messages: NOTIFY_PUBLIC_URL + this. */
export const TWILIO_INBOUND_PATH = '/webhooks/twilio/inbound';

/** Twilio's default opt-out keywords (case and surrounding spaces do not matter; Twilio stops sending on them itself). */
export const OPT_OUT_WORDS: ReadonlySet<string> = new Set([
  'STOP',
  'STOPALL',
  'STOP ALL',
  'UNSUBSCRIBE',
  'CANCEL',
  'END',
  'QUIT',
  'REVOKE',
  'OPTOUT',
]);

const EMPTY_TWIML = { contentType: 'text/xml', body: '<?xml version="1.0" encoding="UTF-8"?><Response></Response>' };
const E164 = /^\+[1-9]\d{1,14}$/;

/** The opt-out word the text is, or undefined: Twilio's OptOutType says so too, when Advanced Opt-Out is on. */
function optOutWord(text: string, optOutType: string | undefined): string | undefined {
  const word = text.trim().replace(/\s+/g, ' ').toUpperCase();
  if (OPT_OUT_WORDS.has(word)) return word;
  return optOutType?.toUpperCase() === 'STOP' ? word : undefined;
}

/** `authToken` or `url` undefined (no live credentials, no NOTIFY_PUBLIC_URL): nothing can be verified. */
export async function readTwilioInbound(
  authToken: string | undefined,
  url: string | undefined,
  cb: InboundCallback,
): Promise<InboundReading> {
  const signature = cb.headers['x-twilio-signature'];
  if (!authToken || !url) return { verified: false, why: 'no Twilio credentials or NOTIFY_PUBLIC_URL to verify it with' };
  if (typeof signature !== 'string' || signature === '') return { verified: false, why: 'no X-Twilio-Signature' };
  const params = Object.fromEntries(new URLSearchParams(cb.body));
  const twilio = (await import('twilio')).default;
  if (!twilio.validateRequest(authToken, signature, url + cb.search, params))
    return { verified: false, why: 'the signature does not verify' };
  const from = params.From;
  const text = params.Body ?? '';
  if (!from || !E164.test(from)) return { verified: true, reply: null, why: 'the message names no E.164 sender', ack: EMPTY_TWIML };
  const word = optOutWord(text, params.OptOutType);
  if (word !== undefined) return { verified: true, reply: { kind: 'opt_out', from, word }, ack: EMPTY_TWIML };
  return { verified: true, reply: { kind: 'code', from, code: replyCode(text) }, ack: EMPTY_TWIML };
}
