import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { describePolicy } from '../notification/escalation-policy.js';

const liveSlack = { SLACK_BOT_TOKEN: 'xoxb-1', NOTIFY_SLACK_ALLOW: '#ops' };
const liveSms = {
  TWILIO_ACCOUNT_SID: 'AC' + '0'.repeat(32),
  TWILIO_AUTH_TOKEN: 't',
  TWILIO_FROM: '+14155550000',
  NOTIFY_SMS_ALLOW: '+1415555',
};
const ONCALL = 'oncall=slack:#ops@0,sms:+14155550100@5m,email:lead@example.com@15m';

describe('NOTIFY_ESCALATIONS', () => {
  it('reads named policies of ordered steps, delays 0 or with s, m or h', () => {
    const config = loadConfig({ NOTIFY_ESCALATIONS: `${ONCALL}; night = slack:C0123ABCD@30s,sms:+14155550100@1h` });
    expect(config.escalations).toEqual([
      {
        name: 'oncall',
        steps: [
          { via: 'slack', to: '#ops', delayMs: 0, text: 'slack:#ops@0' },
          { via: 'sms', to: '+14155550100', delayMs: 300_000, text: 'sms:+14155550100@5m' },
          { via: 'email', to: 'lead@example.com', delayMs: 900_000, text: 'email:lead@example.com@15m' },
        ],
      },
      {
        name: 'night',
        steps: [
          { via: 'slack', to: 'C0123ABCD', delayMs: 30_000, text: 'slack:C0123ABCD@30s' },
          { via: 'sms', to: '+14155550100', delayMs: 3_600_000, text: 'sms:+14155550100@1h' },
        ],
      },
    ]);
    expect(describePolicy(config.escalations[0]!)).toBe(
      'oncall: slack:#ops at once, then sms:+14155550100 after 5m, then email:lead@example.com after 15m',
    );
    expect(loadConfig({}).escalations).toEqual([]);
  });

  it('passes a live channel whose allowlist takes each step', () => {
    expect(loadConfig({ ...liveSlack, ...liveSms, NOTIFY_ESCALATIONS: 'p=slack:#ops@0,sms:+14155550100@1m' }).escalations).toHaveLength(1);
  });

  it.each([
    [
      { ...liveSlack, NOTIFY_ESCALATIONS: 'oncall=slack:#random@0' },
      'policy oncall, step 1 (slack:#random@0): "#random" is not on the slack allowlist (NOTIFY_SLACK_ALLOW)',
    ],
    [{ ...liveSms, NOTIFY_ESCALATIONS: 'oncall=slack:#ops@0,sms:+14155550100@5m,sms:+12125550100@10m' }, 'policy oncall, step 3'],
    [{ NOTIFY_ESCALATIONS: 'oncall=fax:123@0' }, 'policy oncall, step 1 (fax:123@0): "fax" is not a channel a step can go through'],
    [{ NOTIFY_ESCALATIONS: 'oncall=slack:ops@0' }, 'policy oncall, step 1 (slack:ops@0): "ops" is not a recipient the Slack channel takes'],
    [{ NOTIFY_ESCALATIONS: 'oncall=email:not-an-address@x@0' }, 'is not a recipient the email channel takes'],
    [
      { NOTIFY_ESCALATIONS: 'oncall=slack:#ops@5d' },
      'policy oncall, step 1 ("slack:#ops@5d"): delay "5d" must be 0 or a number with s, m or h',
    ],
    [{ NOTIFY_ESCALATIONS: 'oncall=slack:#ops@9999h' }, 'longer than a question lives'],
    [{ NOTIFY_ESCALATIONS: 'oncall=slack:#ops' }, 'must be channel:recipient@delay'],
    [{ NOTIFY_ESCALATIONS: 'slack:#ops@0' }, 'must start with a name'],
    [{ NOTIFY_ESCALATIONS: 'oncall=' }, 'policy oncall has no steps'],
    [{ NOTIFY_ESCALATIONS: 'a=slack:#ops@0;a=slack:#ops@1m' }, 'policy a is defined twice'],
  ])('refuses to start, naming the policy and step (%#)', (env, words) => {
    const load = () => loadConfig(env);
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(words);
  });
});
