/**
 * The MIME message of the common notification, written directly: plain ASCII addresses and
 * subject whose header lines need no folding, and text and HTML parts that are 7-bit with
 * lines of at most 76 characters. For such a mail nodemailer's MailComposer writes exactly
 * these bytes (plain-mime.test.ts compares the two on generated mails) but spends most of a
 * dry-run email's time on it: header parsing and re-encoding, a stream per part.
 *
 * Anything else (a name that needs quoting or encoding, a non-ASCII or long line, a CR) gets
 * `undefined`, and the caller builds it with MailComposer as before.
 */
import { randomUUID } from 'node:crypto';
import type { MailParts } from './mime.js';

// Domain labels start with a letter and hold no `--`: nothing for IP or punycode normalising to change.
const ADDRESS = /^[A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*@[a-z](?:-?[a-z0-9])*(?:\.[a-z](?:-?[a-z0-9])*)*$/;
/** `Name <address>`, the name of words of `[\w.-]` between single spaces. */
const NAMED = /^([\w.-]+(?: [\w.-]+)*) <([^<>]+)>$/;
const PRINTABLE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** A subject nodemailer leaves as it is: printable, no quote, nothing that reads as an encoded word. */
const PLAIN_SUBJECT = /^(?!.*=\?)[\x21\x23-\x7e](?:[\x20\x21\x23-\x7e]*[\x21\x23-\x7e])?$/;
/** 7-bit body text: tab, LF and printable ASCII, no line over 76 characters. */
const SEVEN_BIT = /^[\t\n\x20-\x7e]*$/;
const LONG_LINE = /^.{77,}/m;
// nodemailer folds a header line of 76 characters or more.
const MAX_HEADER_LINE = 75;

function mailbox(value: string): string | undefined {
  if (ADDRESS.test(value)) return value;
  const m = NAMED.exec(value);
  if (!m || !ADDRESS.test(m[2]!)) return undefined;
  // nodemailer quotes a name unless it is all `[\w ]`.
  return /^[\w ]+$/.test(m[1]!) ? value : `"${m[1]!}" <${m[2]!}>`;
}

/** As nodemailer writes a 7-bit part: as it is (line ends are the transport's to fix). */
function body(text: string): string | undefined {
  return text !== '' && SEVEN_BIT.test(text) && !LONG_LINE.test(text) ? text : undefined;
}

/** The raw message, or undefined when `mail` needs MailComposer. `text` is the plain-text part. */
export function plainMime(mail: MailParts, text: string): string | undefined {
  const from = mailbox(mail.from);
  const to = mail.to.map(mailbox);
  const replyTo = mail.replyTo === undefined ? undefined : mailbox(mail.replyTo);
  const textBody = body(text);
  const htmlBody = body(mail.html);
  if (from === undefined || to.length === 0 || to.includes(undefined) || textBody === undefined || htmlBody === undefined) return undefined;
  if ((mail.replyTo !== undefined && replyTo === undefined) || !PLAIN_SUBJECT.test(mail.subject)) return undefined;
  if (!PRINTABLE.test(mail.messageId)) return undefined;

  const lines: string[] = [];
  for (const [key, value] of Object.entries(mail.headers)) {
    // Only the header the channel sets; its key in the case nodemailer gives it.
    if (key !== 'X-Notification-Id' || !PRINTABLE.test(value)) return undefined;
    lines.push(`X-Notification-ID: ${value}`);
  }
  lines.push(`From: ${from}`, `To: ${to.join(', ')}`);
  if (replyTo !== undefined) lines.push(`Reply-To: ${replyTo}`);
  lines.push(`Subject: ${mail.subject}`, `Message-ID: ${mail.messageId}`);
  if (lines.some((l) => l.length > MAX_HEADER_LINE)) return undefined;

  // As MailComposer: `baseBoundary` and `date`, when given, make the bytes reproducible (approval).
  const boundary = `--_NmP-${mail.baseBoundary ?? randomUUID().replaceAll('-', '').slice(0, 16)}-Part_1`;
  const part = (type: string, content: string) =>
    `--${boundary}\r\nContent-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\n${content}\r\n`;
  return (
    lines.join('\r\n') +
    `\r\nDate: ${(mail.date ?? new Date()).toUTCString().replace('GMT', '+0000')}\r\nMIME-Version: 1.0\r\n` +
    `Content-Type: multipart/alternative;\r\n boundary="${boundary}"\r\n\r\n` +
    part('text/plain', textBody) +
    part('text/html', htmlBody) +
    `--${boundary}--\r\n`
  );
}
