import { htmlToText } from './html-to-text.js';
import type { EmailNotification } from '../union.js';
import { emailRecipients, toFields } from './recipients.js';
import type { EmailPayload } from './smtp.js';
import type { Channel } from '../channel.js';

/** `Name <a@b>` → `a@b`. */
function address(mailbox: string): string {
  const m = /<([^<>]+)>\s*$/.exec(mailbox);
  return (m ? m[1]! : mailbox).trim();
}

/** The complete MIME message is built here, so dry-run records the bytes SMTP would carry. */
export const emailChannel: Channel<EmailNotification, EmailPayload> = {
  recipients: emailRecipients,

  async buildPayload(n, { id, config }) {
    const from = config.email.from;
    const to = toFields(n);
    const messageId = `<${id}@${address(from).split('@')[1] ?? 'notify-mcp.local'}>`;
    // Loaded on the first email, not at start-up (it is a fair share of cold start).
    const { default: MailComposer } = await import('nodemailer/lib/mail-composer/index.js');
    const composer = new MailComposer({
      from,
      to,
      subject: n.subject,
      html: n.body_html,
      text: n.body_text ?? htmlToText(n.body_html),
      ...(n.reply_to ? { replyTo: n.reply_to } : {}),
      messageId,
      headers: { 'X-Notification-Id': id },
      disableFileAccess: true,
      disableUrlAccess: true,
    });
    const raw = await composer.compile().build();
    return { payload: { envelope: { from: address(from), to }, messageId, raw: raw.toString('utf8') } };
  },
};
