/** `notify-mcp doctor` shows each NOTIFY_ESCALATIONS policy, and a policy refused at start fails the configuration line naming its step. */
import { describe, expect, it } from 'vitest';
import { runDoctor } from './index.js';

const BASE = { NOTIFY_DATA_DIR: '/nonexistent-doctor-escalation' };

describe('doctor and escalation policies', () => {
  it('shows each policy on a line of its own', async () => {
    const report = await runDoctor({
      ...BASE,
      NOTIFY_ESCALATIONS: 'oncall=slack:#ops@0,sms:+14155550100@5m;night=email:lead@example.com@1h',
    });
    expect(report.checks.filter((c) => c.name === 'escalation').map((c) => [c.ok, c.detail])).toEqual([
      [true, 'oncall: slack:#ops at once, then sms:+14155550100 after 5m'],
      [true, 'night: email:lead@example.com after 1h'],
    ]);
  });

  it('fails the configuration line, naming the policy and step, when a step is refused', async () => {
    const report = await runDoctor({
      ...BASE,
      SLACK_BOT_TOKEN: 'xoxb-1',
      NOTIFY_SLACK_ALLOW: '#ops',
      NOTIFY_ESCALATIONS: 'oncall=slack:#random@0',
    });
    expect(report.ok).toBe(false);
    expect(report.checks[0]!.detail).toContain('policy oncall, step 1 (slack:#random@0)');
  });
});
