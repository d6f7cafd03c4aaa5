/** What nodemailer's MailComposer takes, as plain data (it crosses to the worker by structured clone). */
export interface MailParts {
  from: string;
  to: string[];
  subject: string;
  html: string;
  /** Derived from `html` when absent. */
  text?: string;
  replyTo?: string;
  /** A Cc header. There is no bcc here: it travels on the envelope only, so no header can show it. */
  cc?: string[];
  /** Files, base64; nodemailer is told never to read a path or fetch a URL (mime.ts). */
  attachments?: { filename: string; contentType: string; content: string; encoding?: 'base64' }[];
  messageId: string;
  headers: Record<string, string>;
  /** The Date header; with `baseBoundary`, the same parts build the same bytes (an approval is bound to them). */
  date?: Date;
  /** The random part of the multipart boundaries: the channel's (./boundary.ts); nodemailer draws one per message otherwise. */
  baseBoundary?: string;
}
