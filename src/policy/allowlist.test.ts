import { describe, expect, it } from 'vitest';
import { isAllowed } from './allowlist.js';

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
    it('uses the last @ and the bracketed address', () => {
      expect(isAllowed('email', '"a@example.com"@evil.test', allow)).toBe(false);
      expect(isAllowed('email', 'Ops Team <ops@example.com>', allow)).toBe(true);
      expect(isAllowed('email', 'not-an-address', allow)).toBe(false);
      expect(isAllowed('email', 'trailing@', allow)).toBe(false);
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
  });

  describe('slack', () => {
    const allow = list('c0123abcd', '#alerts', 'ops-room');
    it('matches channel IDs case-insensitively', () => {
      expect(isAllowed('slack', 'C0123ABCD', allow)).toBe(true);
      expect(isAllowed('slack', 'C0123ABCE', allow)).toBe(false);
    });
    it('matches #names, and takes a bare entry as a name', () => {
      expect(isAllowed('slack', '#alerts', allow)).toBe(true);
      expect(isAllowed('slack', '#Alerts', allow)).toBe(true);
      expect(isAllowed('slack', '#ops-room', allow)).toBe(true);
      expect(isAllowed('slack', '#general', allow)).toBe(false);
    });
  });
});
