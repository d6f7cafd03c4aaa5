/**
 * Email allowlist entries (an address, a domain, or `*.` its subdomains) and the matcher
 * that holds one bare recipient address to them, case-insensitively, domains in their ASCII
 * (punycode) form. A recipient is allowed only when it can be read with certainty.
 */
import { domainToASCII } from 'node:url';
import type { RecipientMatcher } from '../../policy/matcher.js';

/** RFC 5322 dot-atom without `%` and `!`, which route a mail onwards from the named host. */
const LOCAL_PART = /^[A-Za-z0-9#$&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9#$&'*+/=?^_`{|}~-]+)*$/;
/** Letters, marks and digits of any script, dots and hyphens: what a host name, IDN or not, is written with. */
const RAW_DOMAIN = /^[\p{L}\p{M}\p{N}.-]+$/u;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * The A-label form of a host name, or undefined when it is not one. nodemailer applies the
 * same UTS 46 mapping (node:url's domainToASCII) to the domains it sends to, so both sides
 * compare the domain the mail will go to.
 */
export function asciiDomain(domain: string): string | undefined {
  if (!RAW_DOMAIN.test(domain)) return undefined;
  const ascii = domainToASCII(domain);
  if (!ascii || ascii.length > 253) return undefined;
  return ascii.split('.').every((label) => LABEL.test(label)) ? ascii : undefined;
}

interface Mailbox {
  /** Lower-cased; ASCII only (LOCAL_PART). */
  local: string;
  domain: string;
}

function mailbox(address: string): Mailbox | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0) return undefined;
  const local = address.slice(0, at);
  const domain = asciiDomain(address.slice(at + 1));
  if (!domain || !LOCAL_PART.test(local)) return undefined;
  return { local: local.toLowerCase(), domain };
}

/**
 * One address as the matcher compares it (local part lower-cased, domain in A-labels), so that
 * what counts as one recipient is what the allowlist takes as one; lower-cased whole when it
 * cannot be read with certainty (the matcher refuses those anyway).
 */
export function addressKey(address: string): string {
  const box = mailbox(address);
  return box ? `${box.local}@${box.domain}` : address.toLowerCase();
}

type Entry = { kind: 'address'; mailbox: Mailbox } | { kind: 'domain' | 'subdomains'; domain: string };

function parseEntry(entry: string): Entry | undefined {
  if (entry.startsWith('*.')) {
    const domain = asciiDomain(entry.slice(2));
    return domain ? { kind: 'subdomains', domain } : undefined;
  }
  const domainOnly = entry.startsWith('@') ? entry.slice(1) : entry.includes('@') ? undefined : entry;
  if (domainOnly !== undefined) {
    const domain = asciiDomain(domainOnly);
    return domain ? { kind: 'domain', domain } : undefined;
  }
  const box = mailbox(entry);
  return box ? { kind: 'address', mailbox: box } : undefined;
}

/**
 * Entries: a full address (`ops@example.com`), a domain (`example.com`, that domain exactly;
 * `@example.com` means the same), or `*.example.com` (any subdomain, not the domain itself:
 * list both to allow both); `bücher.de` and `xn--bcher-kva.de` are one domain. A recipient is
 * one bare address, as nodemailer will put it on the envelope (display names and lists are
 * taken apart by the channel first), with an unquoted local part without the old relay
 * syntaxes (`%`, `!`), and a domain that is a host name. Quoted local parts, domain literals,
 * source routes and anything with spaces or control characters are refused whatever the list
 * says.
 */
export const emailMatcher: RecipientMatcher = {
  entryProblem(entry) {
    // `*@example.com` is a real (and unlikely) mailbox, not a wildcard: say what was meant.
    if (entry.startsWith('*@')) return `is not a wildcard: write ${entry.slice(2)} for every address at that domain`;
    if (parseEntry(entry)) return undefined;
    return 'is not an address (ops@example.com), a domain (example.com or @example.com) or *.example.com for its subdomains';
  },

  allows(recipient, entries) {
    const box = mailbox(recipient);
    if (!box) return false;
    return entries.some((raw) => {
      const entry = parseEntry(raw);
      switch (entry?.kind) {
        case 'address':
          return entry.mailbox.local === box.local && entry.mailbox.domain === box.domain;
        case 'domain':
          return box.domain === entry.domain;
        case 'subdomains':
          return box.domain.endsWith(`.${entry.domain}`);
        default:
          return false;
      }
    });
  },
};
