/** The allowlist rule, and each built-in channel's matcher (its entry syntax), by channel name. */
import { describe, expect, it } from 'vitest';
import { CHANNELS, type Via } from '../channels/registry.js';
import { isAllowed as allowedBy, type Allowlist } from './allowlist.js';

const matcher = (via: Via) => CHANNELS.find((c) => c.name === via)!.allowlist.matcher;
const isAllowed = (via: Via, recipient: string, allow: Allowlist | undefined) => allowedBy(matcher(via), recipient, allow);
const allowEntryProblem = (via: Via, entry: string) => matcher(via).entryProblem(entry);

const list = (...entries: string[]) => ({ any: false, entries });

describe('isAllowed', () => {
  it('allows everything without an allowlist (dry-run) and with *', () => {
    expect(isAllowed('email', 'anyone@evil.test', undefined)).toBe(true);
    expect(isAllowed('sms', '+4915112345678', { any: true, entries: [] })).toBe(true);
  });

  it('allows nothing with an empty list', () => {
    expect(isAllowed('email', 'ops@example.com', list())).toBe(false);
    expect(isAllowed('sms', '+14155550100', list())).toBe(false);
    expect(isAllowed('slack', '#alerts', list())).toBe(false);
  });

  describe('email', () => {
    const allow = list('example.com', 'boss@partner.org', '*.corp.example', '@acme.io');
    it('matches a domain exactly, case-insensitively', () => {
      expect(isAllowed('email', 'Ops@Example.COM', allow)).toBe(true);
      expect(isAllowed('email', 'ops@mail.example.com', allow)).toBe(false);
      expect(isAllowed('email', 'ops@example.com.evil.test', allow)).toBe(false);
      expect(isAllowed('email', 'ops@notexample.com', allow)).toBe(false);
    });
    it('matches a full address and nothing else at its domain', () => {
      expect(isAllowed('email', 'BOSS@partner.org', allow)).toBe(true);
      expect(isAllowed('email', 'intern@partner.org', allow)).toBe(false);
    });
    it('matches subdomains with *. but not the bare domain', () => {
      expect(isAllowed('email', 'a@eu.corp.example', allow)).toBe(true);
      expect(isAllowed('email', 'a@x.eu.corp.example', allow)).toBe(true);
      expect(isAllowed('email', 'a@corp.example', allow)).toBe(false);
      expect(isAllowed('email', 'a@evilcorp.example', allow)).toBe(false);
    });
    it('takes @domain as a domain', () => {
      expect(isAllowed('email', 'x@acme.io', allow)).toBe(true);
    });
    it('refuses what it cannot read with certainty, even at an allowed domain', () => {
      for (const recipient of [
        '"a@example.com"@evil.test', // quoted local part: the domain is evil.test
        '"x"@example.com', // quoted local parts are refused outright
        'Ops Team <ops@example.com>', // display names are the channel's to take apart
        'ops@example.com, x@evil.test', // so are lists
        'ops@example.com\r\nBcc: x@evil.test',
        ' ops@example.com', // not the exact envelope address
        'x%evil.test@example.com', // percent hack: relayed on to evil.test
        'evil.test!x@example.com', // bang path
        '@evil.test:x@example.com', // source route
        'x@[127.0.0.1]', // domain literal
        'x@example.com.', // trailing dot
        'x@ex%61mple.com', // percent-encoded domain
        'not-an-address',
        'trailing@',
        '@example.com',
      ]) {
        expect(isAllowed('email', recipient, allow), recipient).toBe(false);
      }
    });
    it('compares IDN domains in their ASCII form, on both sides', () => {
      const idn = list('bücher.de', '*.münchen.example');
      expect(isAllowed('email', 'a@xn--bcher-kva.de', idn)).toBe(true);
      expect(isAllowed('email', 'a@BÜCHER.de', idn)).toBe(true);
      expect(isAllowed('email', 'a@bucher.de', idn)).toBe(false);
      expect(isAllowed('email', 'a@x.xn--mnchen-3ya.example', idn)).toBe(true);
      expect(isAllowed('email', 'a@xn--bcher-kva.de', list('xn--bcher-kva.de'))).toBe(true);
      // a lookalike that maps to an allowed domain is the domain nodemailer sends to (UTS 46)
      expect(isAllowed('email', 'a@ＥＸＡＭＰＬＥ.com', allow)).toBe(true);
      // ... but a local part outside ASCII is never read as an allowed address
      expect(isAllowed('email', 'boſs@partner.org', allow)).toBe(false);
    });
  });

  describe('sms', () => {
    const allow = list('+1415', '44 20 7946', '+4915112345678');
    it('matches E.164 prefixes', () => {
      expect(isAllowed('sms', '+14155550100', allow)).toBe(true);
      expect(isAllowed('sms', '+14165550100', allow)).toBe(false);
      expect(isAllowed('sms', '+442079460000', allow)).toBe(true);
      expect(isAllowed('sms', '+4915112345678', allow)).toBe(true);
      expect(isAllowed('sms', '+4915112345679', allow)).toBe(false);
    });
    it('does not let a prefix match in the middle of a number', () => {
      expect(isAllowed('sms', '+11415555000', allow)).toBe(false);
    });
    it('ignores an entry that is only a plus', () => {
      expect(isAllowed('sms', '+14155550100', list('+'))).toBe(false);
    });
    it('refuses a recipient that is not E.164 as written', () => {
      for (const recipient of ['+1 415 555 0100', '14155550100', '+1415abc0100', '+1415555010012345', '+14155550100\n']) {
        expect(isAllowed('sms', recipient, allow), recipient).toBe(false);
      }
    });
  });

  describe('slack', () => {
    const allow = list('C0123ABCD', '#alerts', '#Ops-Room');
    it('matches channel IDs exactly: a folded ID is another channel', () => {
      expect(isAllowed('slack', 'C0123ABCD', allow)).toBe(true);
      expect(isAllowed('slack', 'C0123ABCE', allow)).toBe(false);
      expect(isAllowed('slack', 'c0123abcd', allow)).toBe(false);
      expect(isAllowed('slack', 'C0123ABCD', list('c0123abcd'))).toBe(false);
    });
    it('matches #names case-insensitively', () => {
      expect(isAllowed('slack', '#alerts', allow)).toBe(true);
      expect(isAllowed('slack', '#Alerts', allow)).toBe(true);
      expect(isAllowed('slack', '#ops-room', allow)).toBe(true);
      expect(isAllowed('slack', '#general', allow)).toBe(false);
    });
    it('never matches an ID with a name, either way', () => {
      expect(isAllowed('slack', '#c0123abcd', allow)).toBe(false);
      expect(isAllowed('slack', '#C0123ABCD', allow)).toBe(false);
      expect(isAllowed('slack', 'DEPLOYS', list('#deploys'))).toBe(false);
      expect(isAllowed('slack', '#deploys', list('DEPLOYS'))).toBe(false);
      // a bare word is neither (and refused at start), so it allows nothing
      expect(isAllowed('slack', 'DEPLOYS', list('deploys'))).toBe(false);
      expect(isAllowed('slack', '#deploys', list('deploys'))).toBe(false);
    });
    it('folds ASCII only: no Unicode case mapping makes two names equal', () => {
      // U+212A KELVIN SIGN lower-cases to "k" in JavaScript
      expect(isAllowed('slack', '#\u212Aeys', list('#keys'))).toBe(false);
      expect(isAllowed('slack', '#keys', list('#\u212Aeys'))).toBe(false);
    });
  });
});

describe('allowEntryProblem (checked at start)', () => {
  it('accepts what each channel documents', () => {
    for (const e of ['example.com', '@example.com', '*.example.com', 'ops@example.com', 'bücher.de', 'localhost']) {
      expect(allowEntryProblem('email', e), e).toBeUndefined();
    }
    for (const e of ['+1415', '1415', '+44 20 7946', '+1 (415) 555-0100', '+4915112345678']) {
      expect(allowEntryProblem('sms', e), e).toBeUndefined();
    }
    for (const e of ['C0123ABCD', 'G0123ABCD', 'D0123ABCD', '#alerts', '#Ops-Room', '#a.b_c-d']) {
      expect(allowEntryProblem('slack', e), e).toBeUndefined();
    }
  });

  it('refuses a Slack entry that is neither an ID nor a #name, and says what to write', () => {
    expect(allowEntryProblem('slack', 'alerts')).toContain('write #alerts');
    expect(allowEntryProblem('slack', 'c0123abcd')).toContain('channel IDs are upper case (C0123ABCD)');
    expect(allowEntryProblem('slack', 'deploys')).toMatch(/DEPLOYS.*#deploys/);
    // A user ID (U…, W…) is an entry: a post to it opens the DM.
    expect(allowEntryProblem('slack', 'U0123ABCD')).toBeUndefined();
    for (const e of ['#', '# alerts', '<#C0123ABCD>', 'https://x.slack.com/archives/C0123ABCD']) {
      expect(allowEntryProblem('slack', e), e).toMatch(/neither a channel ID/);
    }
  });

  it('refuses email and SMS entries that could never match as meant', () => {
    expect(allowEntryProblem('email', '*@example.com')).toContain('write example.com');
    for (const e of ['exa mple.com', 'example.com.', '"x"@example.com', 'a%b@example.com', '[127.0.0.1]', '*.', 'ops@', '@']) {
      expect(allowEntryProblem('email', e), e).toMatch(/is not an address/);
    }
    for (const e of ['+', '+1-800-FLOWERS', '0044', '+0', '+1234567890123456']) {
      expect(allowEntryProblem('sms', e), e).toMatch(/is not an E\.164 prefix/);
    }
  });
});
