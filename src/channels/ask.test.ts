/** `ask` on every branch: its limits (refinements, not schema keywords), branch-first, and its refusal without NOTIFY_PUBLIC_URL. */
import { describe, expect, it } from 'vitest';
import { validateUnionCall } from '@notify-mcp/union';
import { loadConfig } from '../config/config.js';
import { notificationDef } from './send-union.js';

const defFor = (env: Record<string, string>) => notificationDef(loadConfig({ NOTIFY_DATA_DIR: '/x', ...env }).channels);
const withUrl = defFor({ NOTIFY_PUBLIC_URL: 'https://notify.example.com' });
const withoutUrl = defFor({});
const issues = (call: unknown, def = withUrl) => {
  const r = validateUnionCall(def, {}, call);
  return r.ok ? [] : r.issues.map(({ code, path, message }) => ({ code, path, message }));
};
const sms = { via: 'sms', to: '+14155550123', body: 'Deploy?' };
const email = { via: 'email', to: 'a@example.com', subject: 'Deploy?', body_html: '<p>Deploy?</p>' };
const slack = { via: 'slack', channel: 'C0123ABCD', text: 'Deploy?' };

describe('ask', () => {
  it('is taken on every branch, with choices or as an acknowledgement', () => {
    for (const call of [sms, email, slack]) {
      expect(issues({ ...call, ask: {} })).toEqual([]);
      expect(issues({ ...call, ask: { choices: ['Yes', 'No'], expires_in_s: 60 } })).toEqual([]);
    }
  });

  it('refuses 0 or 6 choices, an empty or 41-character choice, and says the rule', () => {
    for (const choices of [[], ['1', '2', '3', '4', '5', '6'], [''], ['x'.repeat(41)]]) {
      const [issue] = issues({ ...email, ask: { choices } });
      expect(issue).toMatchObject({ path: '/ask/choices' });
      expect(issue!.message).toContain('1-5 choices of 1-40 characters');
    }
    expect(issues({ ...email, ask: { choices: ['x'.repeat(40), 'a', 'b', 'c', 'd'] } })).toEqual([]);
  });

  it('refuses an expiry outside 60..604800 or not whole', () => {
    for (const expires_in_s of [59, 604_801, 90.5, '3600']) {
      expect(issues({ ...slack, ask: { expires_in_s } })[0]).toMatchObject({ path: '/ask/expires_in_s' });
    }
    expect(issues({ ...slack, ask: { expires_in_s: 604_800 } })).toEqual([]);
  });

  it('is closed: an unknown key inside ask is an error, never ignored', () => {
    expect(issues({ ...sms, ask: { choices: ['Yes'], question: 'Deploy?' } })[0]).toMatchObject({ path: '/ask/question' });
  });

  it('is validated branch-first: an SMS field problem and an ask problem are both reported on the sms branch', () => {
    const found = issues({ ...sms, subject: 'x', ask: { choices: [] } });
    expect(found.map((i) => i.path).sort()).toEqual(['/ask/choices', '/subject']);
  });

  it('without NOTIFY_PUBLIC_URL is refused at the call with advice naming it; without ask nothing changes', () => {
    for (const call of [sms, email, slack]) {
      const [issue] = issues({ ...call, ask: {} }, withoutUrl);
      expect(issue).toMatchObject({ path: '/ask' });
      expect(issue!.message).toContain('NOTIFY_PUBLIC_URL');
      expect(issues(call, withoutUrl)).toEqual([]);
    }
  });

  it('refuses a Slack text that the link would push past 40,000 characters, naming the room the link takes', () => {
    // The text's closing line, its token as long as a real one: 103 characters.
    const room = '\n\nAnswer (Acknowledge): <https://notify.example.com/answer/>'.length + 43;
    const [issue] = issues({ ...slack, text: 'x'.repeat(40_000 - room + 1), ask: {} });
    expect(issue).toMatchObject({ code: 'TOO_LONG', path: '/text' });
    expect(issue!.message).toContain(`the answer link takes ${room} of its 40000 characters, so it may have ${40_000 - room}`);
    expect(issues({ ...slack, text: 'x'.repeat(40_000 - room), ask: {} })).toEqual([]);
    // Longer choices take more room; without ask the whole 40,000 are the text's.
    expect(issues({ ...slack, text: 'x'.repeat(40_000 - room), ask: { choices: ['Approve the deploy', 'Decline'] } })[0]).toMatchObject({
      code: 'TOO_LONG',
    });
    expect(issues({ ...slack, text: 'x'.repeat(40_000) })).toEqual([]);
  });

  it('refuses 50 Slack blocks with ask: the link is one more block', () => {
    const blocks = (n: number) => Array.from({ length: n }, () => ({ type: 'divider' }));
    expect(issues({ ...slack, blocks: blocks(50), ask: {} })[0]).toMatchObject({ code: 'TOO_LONG', path: '/blocks' });
    expect(issues({ ...slack, blocks: blocks(49), ask: {} })).toEqual([]);
    expect(issues({ ...slack, blocks: blocks(50) })).toEqual([]);
  });
});
