/**
 * The MIME message of the common notification, written directly: for such a mail nodemailer's
 * MailComposer writes exactly these bytes (plain-mime.test.ts compares the two on generated
 * mails), but most of a dry-run email's time went to its header parsing and re-encoding and a
 * stream per part. Anything else gets `undefined`, and the caller builds it with MailComposer.
 */
import { randomUUID } from 'node:crypto';
import type { MailParts } from './mail-parts.js';

// Domain labels start with a letter and hold no `--`: nothing for IP or punycode normalising to change.
const ADDRESS = /^[A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*@[a-z](?:-?[a-z0-9])*(?:\.[a-z](?:-?[a-z0-9])*)*$/;
/** `Name <address>`, the name of words of `[\w.-]` between single spaces. */
const NAMED = /^([\w.-]+(?: [\w.-]+)*) <([^<>]+)>$/;
const PRINTABLE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** A subject nodemailer leaves as it is: printable, no quote, nothing that reads as an encoded word. */
const PLAIN_SUBJECT = /^(?!.*=\?)[\x21\x23-\x7e](?:[\x20\x21\x23-\x7e]*[\x21\x23-\x7e])?$/;
/** 7-bit body text: lines of tab and printable ASCII, apart by LF, none over 76 characters. */
const SEVEN_BIT_LINES = /^[\t\x20-\x7e]{0,76}(?:\n[\t\x20-\x7e]{0,76})*$/;
const DASH_LINE = /(?:^|\n)--/;
// nodemailer folds a header line of 76 characters or more.
const MAX_HEADER_LINE = 75;

function mailbox(value: string): string | undefined {
  if (ADDRESS.test(value)) return value;
  const m = NAMED.exec(value);
  if (!m || !ADDRESS.test(m[2]!)) return undefined;
  // nodemailer quotes a name unless it is all `[\w ]`.
  return /^[\w ]+$/.test(m[1]!) ? value : `"${m[1]!}" <${m[2]!}>`;
}

// A server's mails share their sender: its header form is worked out once.
let lastFrom: string | undefined;
let lastFromMailbox: string | undefined;
function sender(from: string): string | undefined {
  if (from !== lastFrom) {
    lastFromMailbox = mailbox(from);
    lastFrom = from;
  }
  return lastFromMailbox;
}

/** As nodemailer writes a 7-bit part: as it is (line ends are the transport's to fix). A line starting `--` goes base64, by MailComposer (mime.ts asPart). */
function body(text: string): string | undefined {
  return text !== '' && SEVEN_BIT_LINES.test(text) && !DASH_LINE.test(text) ? text : undefined;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/** The Date header's value as nodemailer writes it (toUTCString, GMT as +0000), from the UTC fields. */
function dateValue(d: Date): string {
  const year = d.getUTCFullYear();
  // toUTCString pads or signs a year outside these.
  if (year < 1000 || year > 9999) return d.toUTCString().replace('GMT', '+0000');
  const time = `${twoDigits(d.getUTCHours())}:${twoDigits(d.getUTCMinutes())}:${twoDigits(d.getUTCSeconds())}`;
  return `${DAYS[d.getUTCDay()]!}, ${twoDigits(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]!} ${year} ${time} +0000`;
}

function part(boundary: string, type: string, content: string): string {
  return `--${boundary}\r\nContent-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\n${content}\r\n`;
}

/**
 * The raw message, or undefined when `mail` needs MailComposer. `text` is the plain-text part.
 * Taken: plain ASCII addresses and subject whose header lines need no folding, and text and
 * HTML parts that are 7-bit with lines of at most 76 characters; not taken: a name that needs
 * quoting or encoding, a non-ASCII or long line, a CR.
 */
export function plainMime(mail: MailParts, text: string): string | undefined {
  const from = sender(mail.from);
  const textBody = body(text);
  const htmlBody = body(mail.html);
  if (from === undefined || mail.to.length === 0 || textBody === undefined || htmlBody === undefined) return undefined;
  if (mail.cc !== undefined || mail.attachments !== undefined) return undefined;
  if (!PLAIN_SUBJECT.test(mail.subject) || !PRINTABLE.test(mail.messageId)) return undefined;

  // The header lines in nodemailer's order, in one string without arrays (this runs on every
  // dry-run email); false for a line nodemailer would fold.
  let head = '';
  const header = (line: string) => {
    head += `${line}\r\n`;
    return line.length <= MAX_HEADER_LINE;
  };
  for (const key in mail.headers) {
    const value = mail.headers[key]!;
    // Only the header the channel sets; its key in the case nodemailer gives it.
    if (key !== 'X-Notification-Id' || !PRINTABLE.test(value) || !header(`X-Notification-ID: ${value}`)) return undefined;
  }
  let to = '';
  for (const address of mail.to) {
    const box = mailbox(address);
    if (box === undefined) return undefined;
    to += to === '' ? box : `, ${box}`;
  }
  if (!header(`From: ${from}`) || !header(`To: ${to}`)) return undefined;
  if (mail.replyTo !== undefined) {
    const replyTo = mailbox(mail.replyTo);
    if (replyTo === undefined || !header(`Reply-To: ${replyTo}`)) return undefined;
  }
  if (!header(`Subject: ${mail.subject}`) || !header(`Message-ID: ${mail.messageId}`)) return undefined;

  // As MailComposer: `baseBoundary` and `date`, when given, make the bytes reproducible (approval).
  const boundary = `--_NmP-${mail.baseBoundary ?? randomUUID().replaceAll('-', '').slice(0, 16)}-Part_1`;
  return (
    head +
    `Date: ${dateValue(mail.date ?? new Date())}\r\nMIME-Version: 1.0\r\n` +
    `Content-Type: multipart/alternative;\r\n boundary="${boundary}"\r\n\r\n` +
    part(boundary, 'text/plain', textBody) +
    part(boundary, 'text/html', htmlBody) +
    `--${boundary}--\r\n`
  );
}
