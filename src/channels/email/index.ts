/**
 * Email by SMTP (nodemailer): everything the channel knows. The complete MIME message is
 * built here, so dry-run records the bytes SMTP would carry; ./smtp.ts sends them as they are.
 */
import { z } from 'zod';
import { ConfigError } from '../../env.js';
import { defineChannel } from '../channel.js';
import { emailMatcher } from './allowlist.js';
import { htmlToText } from './html-to-text.js';
import { emailRecipients, toFields } from './recipients.js';
import type { EmailPayload } from './smtp.js';

const DEFAULT_FROM = 'notify-mcp <notify-mcp@localhost>';

/** `Name <a@b>` → `a@b`. */
function address(mailbox: string): string {
  const m = /<([^<>]+)>\s*$/.exec(mailbox);
  return (m ? m[1]! : mailbox).trim();
}

export const email = defineChannel({
  name: 'email',
  label: 'email',
  variables: ['SMTP_URL', 'EMAIL_FROM'],

  settings(env) {
    const from = env.EMAIL_FROM || DEFAULT_FROM;
    const smtpUrl = env.SMTP_URL || undefined;
    if (!smtpUrl) return { live: false, from };
    if (!/^smtps?:\/\/[^/]/.test(smtpUrl)) {
      throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL, e.g. smtps://user:pass@smtp.example.com:465');
    }
    if (!env.EMAIL_FROM) throw new ConfigError('SMTP_URL is set but EMAIL_FROM is not: set the sender address');
    return { live: true, from, smtpUrl };
  },

  allowlist: { variable: 'NOTIFY_EMAIL_ALLOW', matcher: emailMatcher },

  branch: () => ({
    fields: {
      to: z.union([z.email(), z.array(z.email()).min(1).max(50)]).describe('one address or a list of 1-50'),
      subject: z.string().min(1).max(255),
      body_html: z.string().min(1).describe('HTML body'),
      body_text: z.string().min(1).optional().describe('plain-text part; derived from body_html when absent'),
      reply_to: z.email().optional(),
    },
    description: 'Sends a multipart HTML and text email by SMTP: subject 1-255 characters, up to 50 recipients.',
    limits: 'up to 50 recipients, subject 1-255 characters',
  }),

  // reply_to is a recipient too: a reply goes there.
  recipients: emailRecipients,

  async buildPayload(call, { id, settings }) {
    const { from } = settings;
    const to = toFields(call);
    const messageId = `<${id}@${address(from).split('@')[1] ?? 'notify-mcp.local'}>`;
    // Loaded on the first email, not at start-up (it is a fair share of cold start).
    const { default: MailComposer } = await import('nodemailer/lib/mail-composer/index.js');
    const composer = new MailComposer({
      from,
      to,
      subject: call.subject,
      html: call.body_html,
      text: call.body_text ?? htmlToText(call.body_html),
      ...(call.reply_to ? { replyTo: call.reply_to } : {}),
      messageId,
      headers: { 'X-Notification-Id': id },
      disableFileAccess: true,
      disableUrlAccess: true,
    });
    const raw = await composer.compile().build();
    const payload: EmailPayload = { envelope: { from: address(from), to }, messageId, raw: raw.toString('utf8') };
    return { payload };
  },

  async createProvider(settings, { log, maxConcurrent, requestTimeoutMs }) {
    const { createSmtpProvider } = await import('./smtp.js');
    return createSmtpProvider({
      url: settings.smtpUrl,
      pool: true,
      timeoutsMs: { connection: 10_000, greeting: 10_000, socket: requestTimeoutMs },
      maxConcurrent,
      log,
    });
  },

  examples: [
    { via: 'email', to: 'ops@example.com', subject: 'Deploy done', body_html: '<p>Deployed <b>v1.2</b></p>' },
    {
      via: 'email',
      to: ['a@example.com', 'b@example.org'],
      subject: 'x'.repeat(255),
      body_html: '<p>hi</p>',
      body_text: 'hi',
      reply_to: 'noreply@example.com',
      idempotency_key: 'deploy-42',
    },
  ],
});
