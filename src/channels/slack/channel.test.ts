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
    for (const text of describe({})) expect(text).toContain('Broadcasts (<!channel>, <!here>, @channel, user groups) are posted inert');
    for (const text of describe({ NOTIFY_SLACK_ALLOW_BROADCAST: '1' })) expect(text).toContain('are allowed by the operator and notify everyone they name');
  });
});
