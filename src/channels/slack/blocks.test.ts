import { describe, expect, it } from 'vitest';
import { isAllowed } from '../../policy/allowlist.js';
import { slackMatcher } from './allowlist.js';
import { blocksField, neutraliseBlocks } from './blocks.js';

describe('Slack blocks', () => {
  it('takes the layout blocks, at most 50', () => {
    expect(
      blocksField.safeParse([
        { type: 'header', text: { type: 'plain_text', text: 'x' } },
        { type: 'divider' },
        { type: 'context', elements: [] },
        { type: 'rich_text', elements: [] },
      ]).success,
    ).toBe(true);
    expect(blocksField.safeParse(Array(51).fill({ type: 'divider' })).success).toBe(false);
  });

  it('refuses interactive blocks and elements with advice', () => {
    const actions = blocksField.safeParse([{ type: 'actions', elements: [] }]);
    expect(actions.error?.issues[0]?.message).toMatch(/request URL this server does not have/);
    const button = blocksField.safeParse([
      { type: 'section', text: { type: 'mrkdwn', text: 'x' }, accessory: { type: 'button', text: { type: 'plain_text', text: 'Go' } } },
    ]);
    expect(button.error?.issues[0]?.message).toMatch(/holds a button/);
  });

  it('makes broadcast mentions inert in every string and rich_text element', () => {
    const { blocks, count } = neutraliseBlocks([
      { type: 'section', text: { type: 'mrkdwn', text: 'hey <!channel>' } },
      {
        type: 'rich_text',
        elements: [
          {
            type: 'rich_text_section',
            elements: [
              { type: 'broadcast', range: 'here' },
              { type: 'usergroup', usergroup_id: 'S1' },
              { type: 'user', user_id: 'U1' },
            ],
          },
        ],
      },
    ]);
    expect(count).toBe(3);
    const text = JSON.stringify(blocks);
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('"broadcast"');
    expect(text).not.toContain('"usergroup"');
    expect(text).toContain('"user_id":"U1"');
  });

  it('the allowlist names users by ID, exactly', () => {
    const allow = { any: false, entries: ['U0123ABCD', 'W0AAA1111'] };
    expect(isAllowed(slackMatcher, 'U0123ABCD', allow)).toBe(true);
    expect(isAllowed(slackMatcher, 'W0AAA1111', allow)).toBe(true);
    expect(isAllowed(slackMatcher, 'U0123ABCE', allow)).toBe(false);
    expect(slackMatcher.entryProblem('U0123ABCD')).toBeUndefined();
  });
});
