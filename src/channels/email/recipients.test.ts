import { describe, expect, it } from 'vitest';
import { isAllowed } from '../../policy/allowlist.js';
import type { CallOfChannel } from '../channel.js';
import { emailMatcher } from './allowlist.js';
import { email } from './index.js';
import { addressesIn, emailRecipients } from './recipients.js';

type EmailNotification = CallOfChannel<typeof email>;

const mail = (to: string | string[], reply_to?: string): EmailNotification => ({
  via: 'email',
  to,
  subject: 's',
  body_html: '<p>x</p>',
  ...(reply_to === undefined ? {} : { reply_to }),
});
const allow = { any: false, entries: ['example.com'] };
const allAllowed = (n: EmailNotification) => emailRecipients(n).every((r) => isAllowed(emailMatcher, r, allow));

describe('emailRecipients', () => {
  it('names reply_to as a recipient, besides every to (the email channel asks it)', () => {
    expect(email.recipients(mail('ops@example.com', 'oncall@example.com'))).toEqual(['ops@example.com', 'oncall@example.com']);
    expect(email.recipients(mail(['a@example.com', 'b@example.com']))).toEqual(['a@example.com', 'b@example.com']);
    expect(allAllowed(mail('ops@example.com', 'exfil@attacker.example'))).toBe(false);
    expect(allAllowed(mail('ops@example.com', 'oncall@example.com'))).toBe(true);
  });

  it('takes each field apart as nodemailer does, so every address in it meets the allowlist', () => {
    expect(addressesIn('Ops <ops@example.com>')).toEqual(['ops@example.com']);
    expect(addressesIn('a@example.com, b@attacker.example')).toEqual(['a@example.com', 'b@attacker.example']);
    expect(addressesIn('a@example.com;b@attacker.example')).toEqual(['a@example.com', 'b@attacker.example']);
    expect(addressesIn('team: a@example.com, b@attacker.example;')).toEqual(['a@example.com', 'b@attacker.example']);
    for (const field of ['Ops <ops@example.com>, x@attacker.example', 'team: a@example.com, b@attacker.example;']) {
      expect(allAllowed(mail('ops@example.com', field)), field).toBe(false);
      expect(allAllowed(mail(['ops@example.com', field])), field).toBe(false);
    }
    expect(allAllowed(mail('Ops <ops@example.com>', 'Team <team@EXAMPLE.com>'))).toBe(true);
  });

  it('returns a field whole, and so refused, when the parser could hide an address in it', () => {
    for (const field of [
      'ops@example.com\r\nBcc: x@attacker.example', // the parser would keep only the Bcc address
      'ops@example.com\nx@attacker.example',
      'x@attacker.example <ops@example.com>', // an address in the display name
      'ops@example.com (x@attacker.example)',
      '"x" <ops@example.com>, y', // a member without an address
      '',
      '"a@example.com"@attacker.example',
    ]) {
      expect(addressesIn(field), JSON.stringify(field)).toEqual([field]);
      expect(allAllowed(mail('ops@example.com', field)), JSON.stringify(field)).toBe(false);
    }
  });
});

describe('the email_recipients cap measure', () => {
  const measure = (call: EmailNotification) => email.capMeasures!.email_recipients!(call, undefined);

  it('counts every address the mail goes to: to, cc and bcc', () => {
    const cc = Array.from({ length: 20 }, (_, i) => `copy${i}@example.com`);
    const bcc = Array.from({ length: 20 }, (_, i) => `Hidden ${i} <hidden${i}@example.com>`);
    expect(measure({ ...mail('a@example.com'), cc, bcc })).toBe(41);
    expect(measure({ ...mail(['a@example.com', 'b@example.com']), bcc: ['c@example.com'] })).toBe(3);
  });

  it('counts one person once, judged as the allowlist judges the address (not the name, not the case)', () => {
    const call = {
      ...mail(['Ops <ops@example.com>', 'OPS@Example.COM']),
      cc: ['ops@example.com'],
      bcc: ['Other Name <Ops@example.com>', 'x@bücher.de', 'x@xn--bcher-kva.de', 'y@example.com'],
    };
    expect(measure(call)).toBe(3);
  });

  it('does not count reply_to, which receives nothing', () => {
    expect(measure(mail('a@example.com', 'b@example.com'))).toBe(1);
  });
});
