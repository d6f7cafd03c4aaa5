/**
 * Email by SMTP (nodemailer): everything the channel knows. The complete MIME message is
 * built here, so dry-run records the bytes SMTP would carry; ./smtp.ts sends them as they are.
 */
import { z } from 'zod';
import { ConfigError } from '../../core/env.js';
import { defineChannel } from '../channel.js';
import { emailMatcher } from './allowlist.js';
import { buildEmailMime, plainEmailMime, type MailParts } from './mime.js';
import { addressesIn, emailRecipients, toFields } from './recipients.js';
import type { EmailPayload } from './smtp.js';

// RFC 5321's bound on a path. It also keeps header folding in the MIME build short, which
// grows faster than the header and runs on the event loop.
const emailAddress = z.email().max(254);

const DEFAULT_FROM = 'notify-mcp <notify-mcp@localhost>';

/** `Name <a@b>` → `a@b`. */
function address(mailbox: string): string {
  const m = /<([^<>]+)>\s*$/.exec(mailbox);
  return (m ? m[1]! : mailbox).trim();
}

/** The sender's address (the envelope's) and its domain (Message-ID's), read once with the settings, not per mail. */
function sender(from: string): { address: string; domain: string } {
  const envelopeFrom = address(from);
  return { address: envelopeFrom, domain: envelopeFrom.split('@')[1] ?? 'notify-mcp.local' };
}

export const email = defineChannel({
  name: 'email',
  label: 'email',
  variables: ['SMTP_URL', 'EMAIL_FROM'],

  settings(env) {
    const from = env.EMAIL_FROM || DEFAULT_FROM;
    const smtpUrl = env.SMTP_URL || undefined;
    if (!smtpUrl) return { live: false, from, sender: sender(from) };
    if (!/^smtps?:\/\/[^/]/.test(smtpUrl)) {
      throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL, e.g. smtps://user:pass@smtp.example.com:465');
    }
    if (!env.EMAIL_FROM) throw new ConfigError('SMTP_URL is set but EMAIL_FROM is not: set the sender address');
    return { live: true, from, sender: sender(from), smtpUrl };
  },

  allowlist: { variable: 'NOTIFY_EMAIL_ALLOW', matcher: emailMatcher },

  branch: () => ({
    fields: {
      to: z.union([emailAddress, z.array(emailAddress).min(1).max(50)]),
      subject: z.string().min(1).max(255),
      body_html: z.string().min(1),
      body_text: z.string().min(1).optional().describe('derived from body_html when absent'),
      reply_to: emailAddress.optional(),
    },
    description: 'Sends HTML and text mail by SMTP.',
  }),

  formats: { email: { noun: 'an email address', example: 'ops@example.com' } },

  // reply_to is a recipient too: a reply goes there.
  recipients: emailRecipients,
  // Those the mail goes to (to, cc, bcc), not reply_to: what NOTIFY_CAPS may bound.
  capMeasures: { email_recipients: (call) => toFields(call).reduce((n, field) => n + addressesIn(field).length, 0) },
  // The domain: enough to audit where an agent tried to write, without the person.
  recipientClass: (recipient) => `@${recipient.slice(recipient.lastIndexOf('@') + 1).toLowerCase()}`,

  async check(settings, _allow, ctx) {
    const { checkSmtp } = await import('./check.js');
    return checkSmtp(settings.smtpUrl, ctx);
  },

  summary: (call) => ({ headlineLabel: 'Subject', headline: call.subject, body: call.body_text ?? call.body_html }),

  async buildPayload(call, { id, settings, timeoutMs, at = Date.now() }) {
    const { from, sender } = settings;
    const to = toFields(call);
    const messageId = `<${id}@${sender.domain}>`;
    const mail: MailParts = {
      from,
      to,
      subject: call.subject,
      html: call.body_html,
      messageId,
      headers: { 'X-Notification-Id': id },
      // Deterministic, so an approved email is rebuilt byte for byte.
      date: new Date(at),
      baseBoundary: id.replace(/^ntf_/, ''),
    };
    if (call.body_text !== undefined) mail.text = call.body_text;
    if (call.reply_to) mail.replyTo = call.reply_to;
    // The common notification at once; anything else off the main thread when large (./mime.ts), within the time it is given.
    const raw = plainEmailMime(mail) ?? (await buildEmailMime(mail, { timeoutMs }));
    const payload: EmailPayload = { envelope: { from: sender.address, to }, messageId, raw };
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

  sentMeans: 'The SMTP relay accepted the mail; that is not delivery, and no later receipt comes, so email never shows delivered.',

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
