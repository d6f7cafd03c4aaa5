import type { EmailPayload } from '../../providers/types.js';
import { buildEmailMime } from '../email-mime.js';
import type { EmailNotification } from '../union.js';
import type { Channel } from './types.js';

/** `Name <a@b>` → `a@b`. */
function address(mailbox: string): string {
  const m = /<([^<>]+)>\s*$/.exec(mailbox);
  return (m ? m[1]! : mailbox).trim();
}

/** The complete MIME message is built here (in a worker), so dry-run records the bytes SMTP would carry. */
export const emailChannel: Channel<EmailNotification, EmailPayload> = {
  recipients: (n) => (Array.isArray(n.to) ? n.to : [n.to]),

  async buildPayload(n, { id, config }) {
    const from = config.email.from;
    const to = this.recipients(n);
    const messageId = `<${id}@${address(from).split('@')[1] ?? 'notify-mcp.local'}>`;
    // Off the main thread, within half the send's budget (payload building counts against it).
    const raw = await buildEmailMime(
      {
        from,
        to,
        subject: n.subject,
        html: n.body_html,
        ...(n.body_text !== undefined ? { text: n.body_text } : {}),
        ...(n.reply_to ? { replyTo: n.reply_to } : {}),
        messageId,
        headers: { 'X-Notification-Id': id },
      },
      { timeoutMs: config.sendBudgetMs / 2 },
    );
    return { payload: { envelope: { from: address(from), to }, messageId, raw } };
  },
};
