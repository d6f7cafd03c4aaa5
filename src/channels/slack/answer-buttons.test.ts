import { describe, expect, it } from 'vitest';
import { slack } from './index.js';
import { answerButtons, textSections } from './answer-buttons.js';

const TOKEN = 'a'.repeat(43);
const answer = { choices: ['Yes', 'No'], url: `https://notify.example.com/answer/${TOKEN}` };
const call = { via: 'slack' as const, channel: 'C0123ABCD', text: 'Deploy v2?' };
const build = (env: Record<string, string>) =>
  slack.buildPayload(call, { id: 'ntf_1', settings: slack.settings(env), timeoutMs: 1000, answer });

describe('Slack answer buttons', () => {
  it('come with SLACK_SIGNING_SECRET only; without it the question carries its link alone', async () => {
    const plain = (await build({})).payload;
    expect(plain.blocks).toBeUndefined();
    expect(plain.text).toContain(answer.url);
    const buttons = (await build({ SLACK_SIGNING_SECRET: 's' })).payload;
    expect(buttons.text).toBe(plain.text);
    expect(buttons.blocks).toEqual([{ type: 'section', text: { type: 'mrkdwn', text: 'Deploy v2?' } }, answerButtons(answer)]);
  });

  it('carry the token and the choice position, one per choice, built the same every time (an approval hashes the payload)', async () => {
    expect(answerButtons(answer).elements).toEqual([
      { type: 'button', action_id: 'notify_answer_0', text: { type: 'plain_text', text: 'Yes' }, value: `0:${TOKEN}` },
      { type: 'button', action_id: 'notify_answer_1', text: { type: 'plain_text', text: 'No' }, value: `1:${TOKEN}` },
    ]);
    expect(await build({ SLACK_SIGNING_SECRET: 's' })).toEqual(await build({ SLACK_SIGNING_SECRET: 's' }));
  });

  it("cut a long text into sections within Slack's 3,000 characters, at a line break where one is near", () => {
    const text = `${'a'.repeat(2000)}\n${'b'.repeat(2000)}\n${'c'.repeat(7000)}`;
    const sections = textSections(text).map((s) => s.text.text);
    expect(sections.every((t) => t.length <= 3000)).toBe(true);
    expect(sections[0]).toBe('a'.repeat(2000));
    expect(sections.join('')).toBe(text.replace(/\n/g, ''));
  });

  it('leave room for themselves: with ask, a call may have 49 blocks, not 50', () => {
    const branch = slack.configure({ NOTIFY_PUBLIC_URL: 'https://notify.example.com', NOTIFY_SLACK_ALLOW: '*' }).branch;
    const blocks = (n: number) => Array.from({ length: n }, () => ({ type: 'divider' }));
    expect(branch.safeParse({ ...call, blocks: blocks(50) }).success).toBe(true);
    expect(branch.safeParse({ ...call, blocks: blocks(49), ask: {} }).success).toBe(true);
    const refused = branch.safeParse({ ...call, blocks: blocks(50), ask: {} });
    expect(refused.error?.issues).toMatchObject([{ path: ['blocks'], params: { code: 'TOO_LONG' } }]);
  });
});
