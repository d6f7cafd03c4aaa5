/**
 * The notification union: the source of truth for send_notification. Every wire shape,
 * the description and the validator are generated from this file (src/union).
 */
import { z } from 'zod';
import { defineUnion, type UnionDef } from '../union/index.js';
import { capacity, segmentProblem } from './sms-segments.js';

const E164 = /^\+[1-9]\d{1,14}$/;
const SLACK_CHANNEL = /^([CGD][A-Z0-9]{2,}|#[a-z0-9][a-z0-9._-]{0,79})$/;
const SLACK_TS = /^\d{10}\.\d{6}$/;

const idempotencyKey = z.string().min(1).max(128).optional();
// RFC 5321's bound on a path. It also keeps header folding in the MIME build (which grows
// faster than the header) short: 50 addresses of 20 KB each held the event loop for 0.8 s.
const emailAddress = z.email().max(254);

export interface UnionSettings {
  /** How many SMS segments a body may take (NOTIFY_SMS_MAX_SEGMENTS). */
  smsMaxSegments: number;
}

export function notificationUnion({ smsMaxSegments }: UnionSettings) {
  const gsm = capacity('GSM-7', smsMaxSegments);
  const ucs = capacity('UCS-2', smsMaxSegments);
  const smsLimits =
    smsMaxSegments === 1 ? `${gsm} GSM-7 characters` : `${smsMaxSegments} segments: ${gsm} GSM-7 characters`;

  const email = z
    .strictObject({
      via: z.literal('email'),
      to: z.union([emailAddress, z.array(emailAddress).min(1).max(50)]).describe('one address or a list of 1-50'),
      subject: z.string().min(1).max(255),
      body_html: z.string().min(1).describe('HTML body'),
      body_text: z.string().min(1).optional().describe('plain-text part; derived from body_html when absent'),
      reply_to: emailAddress.optional(),
      idempotency_key: idempotencyKey,
    })
    .meta({
      description: 'Sends a multipart HTML and text email by SMTP: subject 1-255 characters, up to 50 recipients.',
      limits: 'up to 50 recipients, subject 1-255 characters',
    });

  const sms = z
    .strictObject({
      via: z.literal('sms'),
      to: z.string().regex(E164).describe('E.164 number, e.g. +14155550123'),
      body: z
        .string()
        .min(1)
        // The JSON Schema bound is the GSM-7 capacity; the exact rule (extension characters,
        // UCS-2) is the refinement's, so that one problem gets one message.
        .meta({ maxLength: gsm })
        .superRefine((body, ctx) => {
          const problem = segmentProblem(body, smsMaxSegments);
          if (problem) ctx.addIssue({ code: 'custom', message: problem, params: { code: 'TOO_LONG' } });
        }),
      idempotency_key: idempotencyKey,
    })
    .meta({
      description: `Sends a text message by Twilio: body fits ${smsLimits}, or ${ucs} when any character needs UCS-2 (emoji, most non-Latin scripts).`,
      limits: smsLimits,
    });

  const slack = z
    .strictObject({
      via: z.literal('slack'),
      channel: z.string().regex(SLACK_CHANNEL).describe('channel ID (C…, G…, D…) or #name'),
      text: z.string().min(1).max(40_000),
      thread: z.string().regex(SLACK_TS).optional().describe('parent message ts to reply in, e.g. 1712345678.123456'),
      idempotency_key: idempotencyKey,
    })
    .meta({
      description: 'Posts a Slack message as the bot: text up to 40,000 characters.',
      limits: 'text up to 40,000 characters',
    });

  return z.discriminatedUnion('via', [email, sms, slack]);
}

export type Notification = z.infer<ReturnType<typeof notificationUnion>>;
export type EmailNotification = Extract<Notification, { via: 'email' }>;
export type SmsNotification = Extract<Notification, { via: 'sms' }>;
export type SlackNotification = Extract<Notification, { via: 'slack' }>;

export function notificationDef(settings: UnionSettings): UnionDef {
  return defineUnion(notificationUnion(settings), {
    toolName: 'send_notification',
    title: 'Send notification',
    intro: 'Sends one notification by email, SMS or Slack.',
    outro:
      'idempotency_key (1-128 characters): the same key and payload within 24 h returns the first result and sends nothing again; a different payload under that key is IDEMPOTENCY_CONFLICT. Channels without credentials run in dry-run.',
    variantNoun: 'channel',
    variantToolName: (via) => `send_${via}`,
    nestedKey: 'notification',
  });
}
