/**
 * Email by SMTP (nodemailer): everything the channel knows. The complete MIME message is
 * built here, so dry-run records the bytes SMTP would carry; ./smtp.ts sends them as they are.
 */
import { z } from 'zod';
import { ConfigError, positiveInt } from '../../core/env.js';
import { defineChannel } from '../channel.js';
import { emailMatcher } from './allowlist.js';
import { smtpRelays } from './relays.js';
import { attachmentFacts, attachmentSettings, attachmentsField, attachmentWireBytes, sizeWords, typeWords } from './attachments.js';
import { mailBoundary } from './boundary.js';
import { buildEmailMime, plainEmailMime, type MailParts } from './mime.js';
import { withEmailAnswer } from './answer-links.js';
import {
  distinctRecipientCount,
  emailRecipients,
  envelopeRecipients,
  mailbox,
  recipientCount,
  toFields,
  type AddressFields,
} from './recipients.js';
import type { EmailPayload } from './smtp.js';

const DEFAULT_MAX_RECIPIENTS = 50;

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

const htmlText = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

export const email = defineChannel({
  name: 'email',
  label: 'email',
  variables: [
    'SMTP_URL',
    'EMAIL_FROM',
    'NOTIFY_EMAIL_MAX_RECIPIENTS',
    'NOTIFY_EMAIL_MAX_ATTACHMENT_BYTES',
    'NOTIFY_EMAIL_ATTACHMENT_TYPES',
  ],

  settings(env) {
    const from = env.EMAIL_FROM || DEFAULT_FROM;
    const smtpUrl = env.SMTP_URL || undefined;
    const attachments = attachmentSettings(env);
    const common = {
      from,
      sender: sender(from),
      /** to, cc and bcc together. */
      maxRecipients: positiveInt(env, 'NOTIFY_EMAIL_MAX_RECIPIENTS', DEFAULT_MAX_RECIPIENTS),
      ...attachments,
      largerCalls: { bytes: attachmentWireBytes(attachments.maxAttachmentBytes), variable: 'NOTIFY_EMAIL_MAX_ATTACHMENT_BYTES' },
    };
    if (!smtpUrl) return { live: false, ...common };
    // One relay, or several in the order they are tried (./failover.ts).
    const smtpUrls = smtpRelays(smtpUrl);
    if (smtpUrls.length === 0 || smtpUrls.some((u) => !/^smtps?:\/\/[^/]/.test(u))) {
      throw new ConfigError(
        'SMTP_URL must be an smtp:// or smtps:// URL, or several separated by commas, e.g. smtps://user:pass@smtp.example.com:465',
      );
    }
    if (!env.EMAIL_FROM) throw new ConfigError('SMTP_URL is set but EMAIL_FROM is not: set the sender address');
    return { live: true, ...common, smtpUrls };
  },

  allowlist: { variable: 'NOTIFY_EMAIL_ALLOW', matcher: emailMatcher },

  branch: (settings) => {
    const max = settings.maxRecipients;
    return {
      fields: {
        to: z.union([mailbox, z.array(mailbox).min(1).max(max)]),
        // Bounded by the refinement below, to, cc and bcc together: a bound each would say the same thing three times.
        cc: z.array(mailbox).optional(),
        bcc: z.array(mailbox).optional().meta({ description: 'in no header' }),
        subject: z.string().min(1).max(255),
        body_html: z.string().min(1),
        // Optional, and derived from body_html when absent: every mail is multipart/alternative.
        body_text: z.string().min(1).optional(),
        reply_to: mailbox.optional(),
        attachments: attachmentsField(settings).optional(),
      },
      description: `Addresses may be Name <a@b>; ≤${max} recipients in all.`,
      limits: { attachments: `${typeWords(settings.attachmentTypes)}; ${sizeWords(settings.maxAttachmentBytes)} in all` },
      refine(call: AddressFields, ctx: z.RefinementCtx) {
        const count = recipientCount(call);
        if (count > max) {
          ctx.addIssue({
            code: 'custom',
            path: [call.bcc ? 'bcc' : call.cc ? 'cc' : 'to'],
            message: `Send to fewer people: to, cc and bcc name ${count} recipients, and a mail may name at most ${max} (NOTIFY_EMAIL_MAX_RECIPIENTS). Split it into several sends.`,
            params: { code: 'TOO_LONG' },
          });
        }
      },
    };
  },

  formats: { email: { noun: 'an email address', example: 'ops@example.com' } },

  // reply_to is a recipient too: a reply goes there. (A wrapper: a bare function reference here defeats the inference of the branch's shape.)
  recipients: (call) => emailRecipients(call),
  // Those the mail goes to (to, cc, bcc), not reply_to: what NOTIFY_CAPS may bound.
  capMeasures: { email_recipients: (call) => distinctRecipientCount(call) },
  // The domain: enough to audit where an agent tried to write, without the person.
  notice: (to, n) => ({
    via: 'email',
    to,
    subject: n.subject,
    body_html: `<p>${htmlText(n.text)}</p><p>Approve or decline: <a href="${htmlText(n.link)}">${htmlText(n.link)}</a></p>`,
  }),
  forward: (to, m) => ({
    via: 'email',
    to,
    subject: m.subject.slice(0, 255),
    body_html: `<p>${htmlText(m.text).replace(/\n/g, '<br>')}</p>`,
    body_text: m.text,
  }),
  recipientClass: (recipient) => `@${recipient.slice(recipient.lastIndexOf('@') + 1).toLowerCase()}`,

  async check(settings, _allow, ctx) {
    const { checkSmtp } = await import('./check.js');
    const { relayName } = await import('./relays.js');
    const each = await Promise.all(settings.smtpUrls.map((url) => checkSmtp(url, ctx, settings.sender.address)));
    // Several relays: each line says which one it checked.
    if (each.length === 1) return each[0]!;
    return each.flatMap((checks, i) =>
      checks.map((c) => ({ ...c, name: `${c.name} (relay ${i + 1}, ${relayName(settings.smtpUrls[i]!)})` })),
    );
  },

  // The text part was derived from the old HTML, or given for it: derived again from the new one.
  editWaiting: ({ body_text: _text, ...call }, change) => ({ ...call, body_html: change.text }),
  summary: (call) => {
    const details: { label: string; value: string }[] = [];
    if (call.cc) details.push({ label: 'Cc', value: call.cc.join(', ') });
    // The hidden copies above all: a person must see where a mail goes that its headers do not show.
    if (call.bcc) details.push({ label: 'Bcc (in no header)', value: call.bcc.join(', ') });
    for (const [i, a] of (call.attachments ?? []).entries()) {
      const f = attachmentFacts(a);
      details.push({ label: `Attachment ${i + 1}`, value: `${f.filename} (${f.content_type}, ${f.size} bytes, sha256 ${f.sha256})` });
    }
    return { headlineLabel: 'Subject', headline: call.subject, body: call.body_text ?? call.body_html, details };
  },

  async buildPayload(call, { id, settings, timeoutMs, at = Date.now(), answer }) {
    const { from, sender } = settings;
    const to = toFields(call);
    const messageId = `<${id}@${sender.domain}>`;
    const bodies = answer ? withEmailAnswer(call.body_html, call.body_text, answer) : { html: call.body_html, text: call.body_text };
    const mail: MailParts = {
      from,
      to,
      subject: call.subject,
      html: bodies.html,
      messageId,
      headers: { 'X-Notification-Id': id },
      // Deterministic, so an approved email is rebuilt byte for byte (the boundary too, below).
      date: new Date(at),
    };
    if (bodies.text !== undefined) mail.text = bodies.text;
    if (call.reply_to) mail.replyTo = call.reply_to;
    // bcc never reaches MailParts, so no header can carry it: it is on the envelope alone.
    if (call.cc) mail.cc = call.cc;
    const files = call.attachments?.map(attachmentFacts);
    if (files)
      mail.attachments = files.map((f) => ({
        filename: f.filename,
        contentType: f.content_type,
        content: f.bytes.toString('base64'),
        encoding: 'base64',
      }));
    // Once the content is final: from the id alone, a caller who edits the body could close it (./boundary.ts).
    mail.baseBoundary = mailBoundary(mail);
    // The common notification at once; anything else off the main thread when large (./mime.ts), within the time it is given.
    const raw = plainEmailMime(mail) ?? (await buildEmailMime(mail, { timeoutMs }));
    const payload: EmailPayload = { envelope: { from: sender.address, to: envelopeRecipients(call) }, messageId, raw };
    // Recorded beside the MIME, which cannot show them: where the hidden copies go, and what each file is.
    if (call.bcc) payload.bcc = call.bcc;
    if (files) payload.attachments = files.map(({ bytes: _bytes, ...facts }) => facts);
    return { payload };
  },

  async createProvider(settings, { log, maxConcurrent, requestTimeoutMs }) {
    const { createSmtpProvider } = await import('./smtp.js');
    const relay = (url: string) =>
      createSmtpProvider({
        url,
        pool: true,
        timeoutsMs: { connection: 10_000, greeting: 10_000, socket: requestTimeoutMs },
        maxConcurrent,
        log,
      });
    if (settings.smtpUrls.length === 1) return relay(settings.smtpUrls[0]!);
    const { failoverProvider } = await import('./failover.js');
    const relays = await Promise.all(settings.smtpUrls.map(async (url) => ({ url, provider: await relay(url) })));
    return failoverProvider(relays, log);
  },

  sentMeans: 'The SMTP relay accepted the mail; that is not delivery, and no later receipt comes, so email never shows delivered.',

  examples: [
    { via: 'email', to: 'ops@example.com', subject: 'Deploy done', body_html: '<p>Deployed <b>v1.2</b></p>' },
    {
      via: 'email',
      to: ['Jane Doe <a@example.com>', 'b@example.org'],
      cc: ['c@example.com'],
      bcc: ['Audit <audit@example.com>'],
      subject: 'x'.repeat(255),
      body_html: '<p>hi</p>',
      body_text: 'hi',
      reply_to: 'noreply@example.com',
      idempotency_key: 'deploy-42',
    },
    {
      via: 'email',
      to: 'ops@example.com',
      subject: 'Report',
      body_html: '<p>Attached</p>',
      attachments: [{ filename: 'report.csv', content_base64: Buffer.from('a,b\n1,2\n').toString('base64') }],
    },
  ],
});
