/** `escalate` on every branch: an enum of the configured policies, refused past the question's expiry or without NOTIFY_PUBLIC_URL. */
import { describe, expect, it } from 'vitest';
import { validateUnionCall } from '@notify-mcp/union';
import { loadConfig } from '../config/config.js';
import { notificationDef } from './send-union.js';

const POLICIES = { NOTIFY_ESCALATIONS: 'oncall=slack:#ops@0,sms:+14155550100@5m;slow=email:lead@example.com@48h' };
const defFor = (env: Record<string, string>) => notificationDef(loadConfig({ NOTIFY_DATA_DIR: '/x', ...env }).channels);
const withUrl = defFor({
  NOTIFY_PUBLIC_URL: 'https://notify.example.com',
  NOTIFY_ESCALATIONS: 'oncall=slack:#ops@0,sms:+14155550100@5m;slow=email:lead@example.com@48h',
});
const issues = (call: unknown, def = withUrl) => {
  const r = validateUnionCall(def, {}, call);
  return r.ok ? [] : r.issues.map(({ path, message }) => ({ path, message }));
};
const sms = { via: 'sms', to: '+14155550123', body: 'Disk full on db-1' };
const slack = { via: 'slack', channel: 'C0123ABCD', text: 'Disk full on db-1' };

describe('escalate', () => {
  it('takes a configured policy on every branch, with or without ask', () => {
    for (const call of [sms, slack]) {
      expect(issues({ ...call, escalate: 'oncall' })).toEqual([]);
      expect(issues({ ...call, escalate: 'oncall', ask: { choices: ['Mine', 'Not mine'] } })).toEqual([]);
    }
  });

  it('refuses a name no policy has, listing the policies', () => {
    const [issue] = issues({ ...slack, escalate: 'nobody' });
    expect(issue).toMatchObject({ path: '/escalate' });
    expect(issue!.message).toMatch(/oncall/);
  });

  it('refuses a policy whose last step leaves after the question expires, saying what to set', () => {
    // slow's step leaves after 48 h; the implied acknowledgement lives a day.
    expect(issues({ ...slack, escalate: 'slow' })).toEqual([
      {
        path: '/escalate',
        message: expect.stringContaining(
          "Policy slow's last step leaves 172800 s after the first send, after the question expires (86400 s)",
        ),
      },
    ]);
    expect(issues({ ...slack, escalate: 'slow', ask: { expires_in_s: 172_800 } })).toEqual([]);
    expect(issues({ ...slack, escalate: 'oncall', ask: { expires_in_s: 299 } })[0]).toMatchObject({ path: '/escalate' });
  });

  it('is refused without NOTIFY_PUBLIC_URL, naming it', () => {
    const [issue] = issues({ ...slack, escalate: 'oncall' }, defFor(POLICIES));
    expect(issue?.message).toContain('NOTIFY_PUBLIC_URL');
  });

  it('is no field at all without a policy', () => {
    const [issue] = issues({ ...slack, escalate: 'oncall' }, defFor({ NOTIFY_PUBLIC_URL: 'https://notify.example.com' }));
    expect(issue?.message).toMatch(/escalate/);
  });
});
