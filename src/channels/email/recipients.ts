/**
 * Every address an email names, for the allowlist and opt-outs: each `to` and the
 * `reply_to` (a reply goes there, so it is a recipient too). A field is taken apart with
 * nodemailer's own address parser, the one that builds the envelope and the headers, so
 * what is checked is what is sent to. Anything that parser would read in a way that could
 * hide an address (a line break that starts another header, a member without an address,
 * an address in a display name) comes back whole, which no allowlist matches.
 */
import addressparser from 'nodemailer/lib/addressparser/index.js';

/** The address fields of an email call. */
export interface AddressFields {
  to: string | string[];
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

export function emailRecipients(n: AddressFields): string[] {
  // A loop rather than flatMap, which costs more on the common single address.
  const recipients: string[] = [];
  for (const field of toFields(n)) recipients.push(...addressesIn(field));
  if (n.reply_to !== undefined) recipients.push(...addressesIn(n.reply_to));
  return recipients;
}
