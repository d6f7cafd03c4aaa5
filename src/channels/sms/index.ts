/**
 * SMS through Twilio: everything the channel knows. The body's limit is counted as carriers
 * split it (./segments.ts); ./twilio.ts sends the form fields built here.
 */
import { z } from 'zod';
import { ConfigError, list, loopbackOrigin, positiveInt, publicBaseUrl } from '../../core/env.js';
import { defineChannel } from '../channel.js';
import { smsMatcher } from './allowlist.js';
import type { AnswerLink } from '../ask.js';
import { readTwilioInbound, TWILIO_INBOUND_PATH } from './inbound.js';
import { readTwilioReceipt, statusCallbackFor, TWILIO_RECEIPT_PATH } from './receipts.js';
import { replyCodesProblem, withReplyCodes } from './reply-codes.js';
import { capacity, countSegments, segmentProblem, SMS_ENCODINGS } from './segments.js';
import type { SmsPayload } from './twilio.js';

/** A forwarded text cut to one segment (the default NOTIFY_SMS_MAX_SEGMENTS): an escalation step must fit any setting. */
function oneSegment(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  if (countSegments(t).segments <= 1) return t;
  // From one GSM-7 segment's room down: UCS-2 text (an emoji, a non-Latin script) fits less.
  let n = Math.min(t.length, 157);
  while (n > 1 && countSegments(`${t.slice(0, n)}...`).segments > 1) n--;
  return `${t.slice(0, n)}...`;
}

const E164 = /^\+[1-9]\d{1,14}$/;
const HOST = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

function mediaHosts(raw: string | undefined): string[] {
  const hosts = list(raw ?? '').map((h) => h.toLowerCase());
  for (const h of hosts) {
    if (!HOST.test(h))
      throw new ConfigError(
        `NOTIFY_SMS_MEDIA_HOSTS: ${JSON.stringify(h)} is not a host name; list hosts such as cdn.example.com (no scheme, no path)`,
      );
  }
  return hosts;
}

/**
 * Why an MMS may not name `value`, or undefined: https, no credentials, its host exactly on the
 * list, and written exactly as the WHATWG parser serializes it. The host is judged on that
 * parser's reading; a string it reads differently from how it is written (a backslash, a
 * space, a dot segment, an upper-case host…) may be read as another host by Twilio's fetcher
 * or by curl, so only the serialization that was judged is accepted, and the advice gives it.
 */
export function mediaUrlProblem(value: string, hosts: readonly string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:') return 'is not https: Twilio fetches media over https only here';
  if (url.username || url.password) return 'carries credentials; send a URL without them';
  if (hosts.length === 0)
    return 'names a host, and NOTIFY_SMS_MEDIA_HOSTS lists none: the operator must name the hosts MMS media may come from';
  if (!hosts.includes(url.hostname)) return `is on ${url.hostname}, which NOTIFY_SMS_MEDIA_HOSTS does not list (${hosts.join(', ')})`;
  if (url.href !== value) return `is not written as it is read; if ${JSON.stringify(url.href.slice(0, 200))} is what you meant, send that`;
  return undefined;
}

/** The serialization the host check judged: what Twilio is given, whatever the call held. */
const judgedUrl = (value: string): string => new URL(value).href;

export const sms = defineChannel({
  name: 'sms',
  label: 'SMS',
  variables: [
    'TWILIO_ACCOUNT_SID',
    'TWILIO_AUTH_TOKEN',
    'TWILIO_FROM',
    'TWILIO_MESSAGING_SERVICE_SID',
    'TWILIO_API_URL',
    'NOTIFY_SMS_MAX_SEGMENTS',
    'NOTIFY_PUBLIC_URL',
    'NOTIFY_SMS_MEDIA_HOSTS',
  ],

  settings(env) {
    const common = {
      /** The sender each message names; `senders` holds it and those tried after it (./senders.ts). */
      from: list(env.TWILIO_FROM ?? '')[0],
      senders: list(env.TWILIO_FROM ?? ''),
      messagingServiceSid: env.TWILIO_MESSAGING_SERVICE_SID || undefined,
      apiUrl: loopbackOrigin(env, 'TWILIO_API_URL'),
      /** How many segments a body may take. */
      maxSegments: positiveInt(env, 'NOTIFY_SMS_MAX_SEGMENTS', 1),
      /** Hosts an MMS may name media on: Twilio fetches each URL, so an unlisted host could carry data out. */
      mediaHosts: mediaHosts(env.NOTIFY_SMS_MEDIA_HOSTS),
      /** Where Twilio posts status callbacks (each send's StatusCallback), when the server is reachable. */
      statusCallback: ((base) => (base ? `${base}/webhooks/${TWILIO_RECEIPT_PATH}` : undefined))(publicBaseUrl(env, 'NOTIFY_PUBLIC_URL')),
      /** The number's incoming-message URL (replies, STOP), as Twilio signs it. */
      inboundUrl: ((base) => (base ? `${base}${TWILIO_INBOUND_PATH}` : undefined))(publicBaseUrl(env, 'NOTIFY_PUBLIC_URL')),
    };
    const accountSid = env.TWILIO_ACCOUNT_SID || undefined;
    const authToken = env.TWILIO_AUTH_TOKEN || undefined;
    if (!accountSid || !authToken) return { live: false, ...common };
    if (!common.from && !common.messagingServiceSid) {
      throw new ConfigError('Twilio credentials are set but neither TWILIO_FROM nor TWILIO_MESSAGING_SERVICE_SID is');
    }
    return { live: true, accountSid, authToken, ...common };
  },

  allowlist: { variable: 'NOTIFY_SMS_ALLOW', matcher: smsMatcher },

  branch: ({ maxSegments, mediaHosts }) => {
    const gsm = capacity('GSM-7', maxSegments);
    const ucs = capacity('UCS-2', maxSegments);
    const segments = maxSegments === 1 ? `${gsm} GSM-7` : `${maxSegments} segments: ${gsm} GSM-7`;
    return {
      fields: {
        to: z
          .string()
          .regex(E164)
          .meta({ description: 'E.164 number', examples: ['+14155550123'] }),
        body: z
          .string()
          .min(1)
          // The JSON Schema bound is the GSM-7 capacity; the exact rule (extension characters,
          // UCS-2) is the refinement's, so that one problem gets one message.
          .meta({ maxLength: gsm })
          .superRefine((body, ctx) => {
            const problem = segmentProblem(body, maxSegments);
            if (problem) ctx.addIssue({ code: 'custom', message: problem, params: { code: 'TOO_LONG' } });
          }),
        media_urls: z
          .array(
            z.string().superRefine((url, ctx) => {
              const problem = url.length > 2048 ? 'is longer than 2048 characters' : mediaUrlProblem(url, mediaHosts);
              if (problem)
                ctx.addIssue({
                  code: 'custom',
                  message: `Fix {field}: ${JSON.stringify(url.slice(0, 200))} ${problem}.`,
                  params: { code: 'INVALID_FIELD' },
                });
            }),
          )
          .min(1)
          .max(10)
          .optional(),
      },
      description: 'SMS by Twilio.',
      // A question's reply codes end the text: they count in its segments (./reply-codes.ts).
      answerCheck: (call: { body: string }, link: AnswerLink) => {
        const problem = replyCodesProblem(call.body, link.choices, maxSegments);
        return problem === undefined ? undefined : { path: ['body'], message: problem };
      },
      // The exact rule is the refinement's: the schema's maxLength is the GSM-7 capacity only.
      limits: {
        body: `fits ${segments} characters, or ${ucs} with emoji or non-Latin`,
        // Twilio takes at most 10 media per message (the schema's maxItems).
        media_urls: `MMS: ≤10 https URLs on ${mediaHosts.length ? mediaHosts.join(', ') : 'NOTIFY_SMS_MEDIA_HOSTS (none yet)'}`,
      },
    };
  },

  result: {
    segments: { type: 'integer' },
    encoding: { type: 'string', enum: [...SMS_ENCODINGS] },
  },

  sentMeans:
    'Twilio accepted the message; it is not yet on the phone. With NOTIFY_PUBLIC_URL set, Twilio reports back and get_notification shows delivered, undelivered or failed.',

  receipts: {
    path: TWILIO_RECEIPT_PATH,
    read: (settings, callback) => readTwilioReceipt(settings.live ? settings.authToken : undefined, settings.statusCallback, callback),
  },

  inbound: {
    path: TWILIO_INBOUND_PATH,
    read: (settings, callback) => readTwilioInbound(settings.live ? settings.authToken : undefined, settings.inboundUrl, callback),
  },

  recipients: (call) => [call.to],
  // What Twilio bills: NOTIFY_CAPS may bound it (the payload's own count).
  capMeasures: { sms_segments: (call, meta) => Number(meta?.segments ?? countSegments(call.body).segments) },
  // The first two digits: the country code, or its start (+1 for North America is +1d).
  recipientClass: (recipient) => `${recipient.slice(0, 3)}…`,

  async check(settings, _allow, ctx) {
    const { checkTwilio } = await import('./check.js');
    const checks = await checkTwilio(settings, ctx);
    if (settings.messagingServiceSid || settings.senders.length < 2) return checks;
    // The senders tried after the first (./senders.ts): each its own line, the account checked once.
    const more = await Promise.all(settings.senders.slice(1).map((from) => checkTwilio({ ...settings, from }, ctx)));
    return [
      ...checks,
      ...more.flatMap((lines, i) => lines.filter((c) => c.name === 'sms sender').map((c) => ({ ...c, name: `sms sender ${i + 2}` }))),
    ];
  },

  forward: (to, m) => ({ via: 'sms', to, body: oneSegment(m.text) }),
  editWaiting: (call, change) => ({ ...call, body: change.text }),
  // Twilio fetches each media URL and sends what it finds: a person approving the message must read where from.
  summary: (call) => ({
    headlineLabel: 'First line',
    headline: call.body.split('\n')[0]!,
    body: call.body,
    details: (call.media_urls ?? []).map((url, i) => ({ label: `Media ${i + 1}`, value: url })),
  }),

  async buildPayload(call, { id, settings, answer }) {
    // A question is answered by a reply code, never a link (DESIGN section 11: links are not added to SMS).
    const body = answer ? withReplyCodes(call.body, answer.choices) : call.body;
    const payload: SmsPayload = { To: call.to, Body: body };
    if (call.media_urls) payload.MediaUrl = call.media_urls.map(judgedUrl);
    if (settings.messagingServiceSid) payload.MessagingServiceSid = settings.messagingServiceSid;
    else if (settings.from) payload.From = settings.from;
    // Our id rides in the URL Twilio signs, so a receipt settles this send even when its API answer is lost.
    if (settings.statusCallback) payload.StatusCallback = statusCallbackFor(settings.statusCallback, id);
    const { segments, encoding } = countSegments(body);
    return { payload, meta: { segments, encoding } };
  },

  async createProvider(settings, { log, maxConcurrent, requestTimeoutMs }) {
    const { createTwilioProvider } = await import('./twilio.js');
    const provider = await createTwilioProvider({
      accountSid: settings.accountSid,
      authToken: settings.authToken,
      apiUrl: settings.apiUrl,
      timeoutMs: requestTimeoutMs,
      maxConcurrent,
      log,
    });
    if (settings.senders.length < 2) return provider;
    const { senderFailover } = await import('./senders.js');
    return senderFailover(provider, settings.senders, log);
  },

  examples: [
    { via: 'sms', to: '+14155550123', body: 'Server down' },
    { via: 'sms', to: '+447911123456', body: 'a'.repeat(160), idempotency_key: 'k' },
    { via: 'sms', to: '+819012345678', body: 'é'.repeat(160) },
    { via: 'sms', to: '+79001234567', body: 'я'.repeat(70) },
    { via: 'sms', to: '+14155550123', body: 'ok 😀' },
  ],
});
