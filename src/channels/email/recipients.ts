/**
 * Every address an email names, for the allowlist and opt-outs: each `to` and the
 * `reply_to` (a reply goes there, so it is a recipient too). A field is taken apart with
 * nodemailer's own address parser, the one that builds the envelope and the headers, so
 * what is checked is what is sent to. Anything that parser would read in a way that could
 * hide an address (a line break that starts another header, a member without an address,
 * an address in a display name) comes back whole, which no allowlist matches.
 */
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { z } from 'zod';
import { describeValue } from '@notify-mcp/union';
import { addressKey } from './allowlist.js';

/** The address fields of an email call. */
export interface AddressFields {
  to: string | string[];
  cc?: string[] | undefined;
  bcc?: string[] | undefined;
  reply_to?: string | undefined;
}

const CONTROL = /[\u0000-\u001f\u007f]/;

/** The addresses nodemailer reads in one address field; the field itself when in doubt. */
export function addressesIn(field: string): string[] {
  if (CONTROL.test(field)) return [field];
  const parsed = addressparser(field, { flatten: true });
  const clean = parsed.length > 0 && parsed.every((p) => p.address && !p.name.includes('@'));
  return clean ? parsed.map((p) => p.address) : [field];
}

/** The `to` field as given: one address or a list. */
export function toFields(n: AddressFields): string[] {
  return Array.isArray(n.to) ? n.to : [n.to];
}

/** The bare addresses a mail goes to (its envelope): every to, cc and bcc. */
export function envelopeRecipients(n: AddressFields): string[] {
  // A loop rather than flatMap, which costs more on the common single address.
  const recipients: string[] = [];
  for (const field of toFields(n)) recipients.push(...addressesIn(field));
  if (n.cc) for (const field of n.cc) recipients.push(...addressesIn(field));
  if (n.bcc) for (const field of n.bcc) recipients.push(...addressesIn(field));
  return recipients;
}

/**
 * How many people a mail reaches, for NOTIFY_CAPS: the distinct addresses over to, cc and bcc,
 * compared as the allowlist compares them, so neither a hidden copy nor a case variant escapes
 * the count, and one person named twice is one.
 */
export function distinctRecipientCount(n: AddressFields): number {
  return new Set(envelopeRecipients(n).map(addressKey)).size;
}

export function emailRecipients(n: AddressFields): string[] {
  const recipients = envelopeRecipients(n);
  if (n.reply_to !== undefined) recipients.push(...addressesIn(n.reply_to));
  return recipients;
}

/** How many people a mail goes to: the bound NOTIFY_EMAIL_MAX_RECIPIENTS sets. */
export function recipientCount(n: AddressFields): number {
  return toFields(n).length + (n.cc?.length ?? 0) + (n.bcc?.length ?? 0);
}

// RFC 5321's bound on a path. It also keeps header folding in the MIME build short, which
// grows faster than the header and runs on the event loop.
const bareAddress = z.email().max(254);

/**
 * One mailbox: `ops@example.com` or `Jane Doe <jane@example.com>`. The address inside is
 * what zod's email check and the allowlist judge; a field that holds more than one address,
 * or one the parser could misread, is refused here rather than sent.
 */
export const mailbox = z.string().superRefine((value, ctx) => {
  // Bounded before parsing; in the refinement, not the schema, so each address field costs a model no tokens for it.
  if (value.length > 320) {
    ctx.addIssue({
      code: 'custom',
      message: 'Shorten {field}: an address with its name takes at most 320 characters.',
      params: { code: 'TOO_LONG' },
    });
    return;
  }
  const inside = addressesIn(value);
  if (inside.length === 1 && inside[0]!.length > 254) {
    ctx.addIssue({
      code: 'custom',
      message: 'Shorten {field}: an address takes at most 254 characters (RFC 5321).',
      params: { code: 'TOO_LONG' },
    });
    return;
  }
  if (inside.length === 1 && bareAddress.safeParse(inside[0]).success) return;
  const why = inside.length > 1 ? 'holds more than one address: give each its own entry' : 'is not one';
  ctx.addIssue({
    code: 'custom',
    message: `Fix {field}: use an email address, e.g. ops@example.com or Jane Doe <jane@example.com>; ${describeValue(value)} ${why}.`,
    params: { code: 'INVALID_FIELD' },
  });
});
