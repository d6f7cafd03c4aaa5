import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../mcp/catalog.js';
import { loadConfig } from '../../config/config.js';
import { slack } from './index.js';

const post = { via: 'slack' as const, channel: 'C0123ABCD', text: '<!channel> db-1 is down, <!subteam^S0123|@oncall> please look' };
const build = (env: Record<string, string>) => slack.buildPayload(post, { id: 'ntf_1', settings: slack.settings(env), timeoutMs: 10_000 });

describe('slack channel: broadcast mentions', () => {
  it('are made inert by default, in the exact payload the provider gets', async () => {
    const { payload } = await build({});
    expect(payload).toEqual({ channel: 'C0123ABCD', text: '@\u2060channel db-1 is down, @\u2060oncall please look' });
  });

  it('go out as written when the operator allows them', async () => {
    const { payload } = await build({ NOTIFY_SLACK_ALLOW_BROADCAST: '1' });
    expect(payload.text).toBe(post.text);
  });

  it('are described in the tool description as the setting makes them', () => {
    const describe = (env: Record<string, string>) => {
      const catalog = buildCatalog(loadConfig({ NOTIFY_DATA_DIR: '/x', ...env }));
      return [
        catalog.flat.tools.find((t) => t.name === 'send_notification')!.description,
        catalog['per-channel'].tools.find((t) => t.name === 'send_slack')!.description,
      ];
    };
    for (const text of describe({})) expect(text).toContain('Broadcasts (<!channel>, <!here>, @channel, user groups) post inert');
    for (const text of describe({ NOTIFY_SLACK_ALLOW_BROADCAST: '1' }))
      expect(text).toContain('are allowed by the operator and notify everyone they name');
  });
});

describe('slack channel: what a person approving a post reads', () => {
  it('names every text, link and mention of the blocks, which Slack shows instead of text', () => {
    const call = {
      via: 'slack' as const,
      channel: 'C0123ABCD',
      text: 'Deploy 142 is done.',
      blocks: [
        {
          type: 'section',
          text: { type: 'mrkdwn', text: '*All staff:* reset your password at <https://sso-reset.evil.example|sso.example.com/reset>' },
        },
        {
          type: 'rich_text',
          elements: [
            {
              type: 'rich_text_section',
              elements: [
                { type: 'broadcast', range: 'channel' },
                { type: 'link', url: 'https://x.example/a', text: 'here' },
              ],
            },
          ],
        },
      ],
    };
    const { details = [] } = slack.summary!(call);
    expect(details).toEqual([
      { label: 'Block 1 (section)', value: '*All staff:* reset your password at <https://sso-reset.evil.example|sso.example.com/reset>' },
      { label: 'Block 1 (section)', value: 'link: https://sso-reset.evil.example (shown as "sso.example.com/reset")' },
      { label: 'Block 2 (rich_text)', value: '@channel (broadcast)' },
      { label: 'Block 2 (rich_text)', value: 'link: https://x.example/a' },
      { label: 'Block 2 (rich_text)', value: 'here' },
    ]);
  });
});
