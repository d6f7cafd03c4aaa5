import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

const base = { NOTIFY_APPROVAL_MODE: 'console', NOTIFY_PUBLIC_URL: 'https://notify.example.com/' };
const liveSlack = { SLACK_BOT_TOKEN: 'xoxb-1', NOTIFY_SLACK_ALLOW: '#approvals' };
const liveEmail = { SMTP_URL: 'smtp://127.0.0.1:25', EMAIL_FROM: 'bot@example.com', NOTIFY_EMAIL_ALLOW: 'ops@example.com' };

describe('NOTIFY_APPROVAL_NOTIFY', () => {
  it('reads slack:<channel> and email:<address>, with the public base URL to link to', () => {
    expect(loadConfig({ ...base, ...liveSlack, NOTIFY_APPROVAL_NOTIFY: 'slack:#approvals' }).approval.notify).toEqual({
      via: 'slack',
      to: '#approvals',
      baseUrl: 'https://notify.example.com',
    });
    expect(loadConfig({ ...base, ...liveEmail, NOTIFY_APPROVAL_NOTIFY: 'email:ops@example.com' }).approval.notify?.to).toBe(
      'ops@example.com',
    );
    // A dry-run channel without an allowlist reaches no one, so any target of its syntax passes.
    expect(loadConfig({ ...base, NOTIFY_APPROVAL_NOTIFY: 'slack:C0123ABCD' }).approval.notify?.via).toBe('slack');
    expect(loadConfig(base).approval.notify).toBeUndefined();
  });

  it.each([
    [{ ...liveSlack, NOTIFY_APPROVAL_NOTIFY: 'slack:#random' }, 'not on the slack allowlist (NOTIFY_SLACK_ALLOW)'],
    [{ ...liveEmail, NOTIFY_APPROVAL_NOTIFY: 'email:boss@elsewhere.org' }, 'not on the email allowlist (NOTIFY_EMAIL_ALLOW)'],
    [{ NOTIFY_SLACK_ALLOW: '', NOTIFY_APPROVAL_NOTIFY: 'slack:#approvals' }, 'NOTIFY_SLACK_ALLOW'],
    [{ NOTIFY_APPROVAL_NOTIFY: 'sms:+14155550100' }, 'is not a channel a notice can go through'],
    [{ NOTIFY_APPROVAL_NOTIFY: 'fax:ops' }, 'is not a channel a notice can go through'],
    [{ NOTIFY_APPROVAL_NOTIFY: '#approvals' }, 'must be <channel>:<recipient>, the channel one of email, slack'],
    [{ NOTIFY_APPROVAL_NOTIFY: 'slack:' }, 'must be <channel>:<recipient>, the channel one of email, slack'],
    [{ NOTIFY_APPROVAL_NOTIFY: 'slack:approvals' }, 'is not a recipient the Slack channel takes'],
    [{ NOTIFY_APPROVAL_NOTIFY: 'email:not-an-address' }, 'is not a recipient the email channel takes'],
    [{ NOTIFY_APPROVAL_NOTIFY: 'slack:#approvals', NOTIFY_APPROVAL_MODE: 'ask' }, 'NOTIFY_APPROVAL_MODE=ask never holds one'],
    [{ NOTIFY_APPROVAL_NOTIFY: 'slack:#approvals', NOTIFY_PUBLIC_URL: '' }, 'set NOTIFY_PUBLIC_URL'],
    [
      { NOTIFY_APPROVAL_NOTIFY: 'slack:#approvals', NOTIFY_PUBLIC_URL: 'notify.example.com' },
      'NOTIFY_PUBLIC_URL must be the public base URL',
    ],
  ])('refuses at start, saying what to set (%#)', (env, words) => {
    const load = () => loadConfig({ ...base, ...env });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(words);
  });
});
