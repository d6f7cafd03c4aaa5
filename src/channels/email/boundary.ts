/**
 * The random part of a mail's multipart boundaries (nodemailer's `baseBoundary`). The MIME
 * structure is the server's alone: no content the caller writes may contain a delimiter.
 *
 * It is a SHA-256 over the message id, its date and every byte of its content, not fresh
 * random bytes, because an approval in ask mode rebuilds the message from its id and time and
 * compares payload hashes: the same call must give the same bytes. A caller who knows the id
 * still cannot plant the boundary, since content holding it would have to hold its own hash;
 * it is checked absent all the same, and derived again if it ever occurs.
 */
import { createHash } from 'node:crypto';
import type { MailParts } from './mail-parts.js';

/** The caller-shaped strings that reach the message: where a boundary must never occur. */
function contents(mail: Omit<MailParts, 'baseBoundary'>): string[] {
  const out = [mail.from, ...mail.to, ...(mail.cc ?? []), mail.replyTo ?? '', mail.subject, mail.html, mail.text ?? ''];
  for (const [k, v] of Object.entries(mail.headers)) out.push(k, v);
  for (const a of mail.attachments ?? []) out.push(a.filename, a.contentType, a.content);
  return out;
}

export function mailBoundary(mail: Omit<MailParts, 'baseBoundary'>): string {
  const parts = contents(mail);
  for (let round = 0; ; round++) {
    const hash = createHash('sha256').update(`notify-mcp boundary ${round}\0${mail.messageId}\0${mail.date?.getTime() ?? ''}`);
    // Each piece with its length first, so that no two contents hash alike.
    for (const p of parts) hash.update(`\0${p.length}\0`).update(p);
    const base = hash.digest('hex').slice(0, 32);
    if (!parts.some((p) => p.includes(base))) return base;
  }
}
