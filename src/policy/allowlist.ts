/**
 * Recipient allowlists (DESIGN section 3), checked before any live send so that an agent
 * that read a prompt injection cannot reach arbitrary recipients.
 *
 * Entries, compared case-insensitively:
 * - email: a full address (`ops@example.com`), a domain (`example.com`, that domain
 *   exactly; `@example.com` means the same), or `*.example.com` (any subdomain of it, not
 *   the domain itself: list both to allow both).
 * - sms: E.164 prefixes (`+1415`, or a whole number); spaces, dashes and dots in an entry
 *   are ignored, and a missing `+` is added.
 * - slack: channel IDs (`C0123ABCD`) or names (`#alerts`; a bare `alerts` is taken as a
 *   name). An ID and a name never match each other: the server does not look names up.
 *
 * `undefined` (a dry-run channel: nothing leaves the machine) allows everything; `*` allows
 * any recipient; an empty list allows none.
 */
import type { Allowlist } from '../config.js';

export type Via = 'email' | 'sms' | 'slack';

/** The address inside `Name <addr>`, or the input trimmed. */
function bareAddress(recipient: string): string {
  const m = /<([^<>]+)>\s*$/.exec(recipient);
  return (m ? m[1]! : recipient).trim().toLowerCase();
}

function emailAllowed(recipient: string, entries: readonly string[]): boolean {
  const address = bareAddress(recipient);
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return false;
  const domain = address.slice(at + 1);
  return entries.some((raw) => {
    const entry = raw.trim().toLowerCase();
    if (entry.startsWith('*.')) return domain.endsWith(entry.slice(1)) && domain.length > entry.length - 1;
    if (entry.startsWith('@')) return domain === entry.slice(1);
    if (entry.includes('@')) return address === entry;
    return domain === entry;
  });
}

function normalisePhone(value: string): string {
  const digits = value.trim().replace(/[\s().-]/g, '');
  return digits.startsWith('+') ? digits : `+${digits}`;
}

function smsAllowed(recipient: string, entries: readonly string[]): boolean {
  const number = normalisePhone(recipient);
  return entries.some((entry) => {
    const prefix = normalisePhone(entry);
    return prefix.length > 1 && number.startsWith(prefix);
  });
}

const CHANNEL_ID = /^[CGD][A-Z0-9]{6,}$/i;

function slackKey(value: string): string {
  const v = value.trim().toLowerCase();
  if (v.startsWith('#') || CHANNEL_ID.test(v)) return v;
  return `#${v}`;
}

function slackAllowed(recipient: string, entries: readonly string[]): boolean {
  const channel = slackKey(recipient);
  return entries.some((entry) => slackKey(entry) === channel);
}

export function isAllowed(via: Via, recipient: string, allow: Allowlist | undefined): boolean {
  if (allow === undefined || allow.any) return true;
  switch (via) {
    case 'email':
      return emailAllowed(recipient, allow.entries);
    case 'sms':
      return smsAllowed(recipient, allow.entries);
    case 'slack':
      return slackAllowed(recipient, allow.entries);
  }
}

/** The variable an operator edits to allow a recipient, for error messages. */
export const ALLOW_VARIABLE: Record<Via, string> = {
  email: 'NOTIFY_EMAIL_ALLOW',
  sms: 'NOTIFY_SMS_ALLOW',
  slack: 'NOTIFY_SLACK_ALLOW',
};
