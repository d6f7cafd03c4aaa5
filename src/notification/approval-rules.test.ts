import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/config.js';
import { ConfigError } from '../core/env.js';
import { describeApproval, parseApprovalRules, ruleName } from './approval-rules.js';

const CHANNELS = [
  { name: 'email', approvalRuleNames: [] },
  { name: 'sms', approvalRuleNames: [] },
  { name: 'slack', approvalRuleNames: ['broadcast'] },
];

describe('NOTIFY_APPROVAL', () => {
  it('is no rule when unset or empty: nothing changes', () => {
    expect(parseApprovalRules(undefined, CHANNELS)).toEqual([]);
    expect(parseApprovalRules(' , ', CHANNELS)).toEqual([]);
    expect(loadConfig({ HOME: '/tmp' }).approval.rules).toEqual([]);
  });

  it('reads 60,000 rules once each (the dedupe was quadratic: minutes at start for one --env-file line)', () => {
    const raw = Array.from({ length: 60_000 }, (_, i) => `recipients>${i % 30_000}`).join(',');
    const rules = parseApprovalRules(raw, CHANNELS);
    expect(rules).toHaveLength(30_000);
    expect(rules[29_999]).toEqual({ kind: 'recipients', over: 29_999 });
  });

  it('reads every kind of rule, once each', () => {
    const rules = parseApprovalRules('first-contact, SMS, broadcast, recipients>5, all, sms', CHANNELS);
    expect(rules).toEqual([
      { kind: 'first-contact' },
      { kind: 'channel', via: 'sms' },
      { kind: 'channel-rule', name: 'broadcast' },
      { kind: 'recipients', over: 5 },
      { kind: 'all' },
    ]);
    expect(rules.map(ruleName)).toEqual(['first-contact', 'sms', 'broadcast', 'recipients>5', 'all']);
  });

  it('refuses an unreadable rule, naming it and the rules there are', () => {
    for (const bad of ['first_contact', 'recipients>x', 'recipients<3', 'fax']) {
      expect(() => parseApprovalRules(`sms,${bad}`, CHANNELS)).toThrow(ConfigError);
      expect(() => parseApprovalRules(bad, CHANNELS)).toThrow(
        `NOTIFY_APPROVAL: "${bad}" is not a rule; use a comma list of all, first-contact, email, sms, slack, broadcast, recipients>N`,
      );
    }
  });

  it('takes the broadcast rule from the Slack module, and refuses a short signing key', () => {
    expect(loadConfig({ HOME: '/tmp', NOTIFY_APPROVAL: 'broadcast' }).approval.rules).toEqual([
      { kind: 'channel-rule', name: 'broadcast' },
    ]);
    expect(() => loadConfig({ HOME: '/tmp', NOTIFY_APPROVAL_KEY: 'short' })).toThrow('NOTIFY_APPROVAL_KEY must be at least 32 bytes');
    expect(loadConfig({ HOME: '/tmp', NOTIFY_APPROVAL_KEY: 'k'.repeat(32) }).approval.key).toBe('k'.repeat(32));
  });

  it('says in the tool description when a person is asked, and nothing without rules', () => {
    const labels = new Map([['sms', 'SMS']]);
    expect(describeApproval([], labels)).toBeUndefined();
    const sentence = describeApproval(parseApprovalRules('sms,recipients>3', CHANNELS), labels)!;
    expect(sentence).toContain('approve every SMS send; more than 3 recipients');
    expect(sentence).toContain('APPROVAL_REQUIRED');
  });
});
