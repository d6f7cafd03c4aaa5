import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, PROFILES } from '../config/config.js';
import { buildCatalog, offeredCatalog } from './catalog.js';
import { offeredGroups } from './tool-groups.js';

const TOKENS = 'ops:abcdefghijklmnop1234,status-bot:bcdefghijklmnop12345,ro:cdefghijklmnop123456';

describe('tool groups', () => {
  it('reads NOTIFY_TOOLS (every group by default) and NOTIFY_TOKEN_TOOLS per token client', () => {
    expect(loadConfig({}).tools).toEqual({ groups: ['send', 'status', 'banners', 'read-only'], byClient: {} });
    const c = loadConfig({
      NOTIFY_HTTP_TOKENS: TOKENS,
      NOTIFY_TOOLS: 'send, status,banners',
      NOTIFY_TOKEN_TOOLS: 'status-bot=status+banners',
    });
    expect(c.tools).toEqual({ groups: ['send', 'status', 'banners'], byClient: { 'status-bot': ['status', 'banners'] } });
    expect(offeredGroups(c, 'status-bot')).toEqual(['status', 'banners']);
    expect(offeredGroups(c, 'ops')).toEqual(['send', 'status', 'banners']);
    expect(offeredGroups(c, undefined)).toEqual(['send', 'status', 'banners']);
  });

  it.each([
    [{ NOTIFY_TOOLS: 'send,write' }, /NOTIFY_TOOLS: "write" in the list is not a tool group; use send, status, banners, read-only/],
    [{ NOTIFY_TOOLS: ',' }, /NOTIFY_TOOLS: the list names no tool group/],
    [{ NOTIFY_TOKEN_TOOLS: 'ro=read-only' }, /"ro" is no client of NOTIFY_HTTP_TOKENS/],
    [{ NOTIFY_HTTP_TOKENS: TOKENS, NOTIFY_TOKEN_TOOLS: 'ro' }, /"ro" must be client=group\[\+group…\]/],
    [{ NOTIFY_HTTP_TOKENS: TOKENS, NOTIFY_TOKEN_TOOLS: 'ro=read-only+admin' }, /"admin" in "ro" is not a tool group/],
    [{ NOTIFY_HTTP_TOKENS: TOKENS, NOTIFY_TOKEN_TOOLS: 'ro=read-only,ro=status' }, /"ro" is named twice/],
    // A token's set narrows the server's; it cannot widen it.
    [
      { NOTIFY_HTTP_TOKENS: TOKENS, NOTIFY_TOOLS: 'read-only', NOTIFY_TOKEN_TOOLS: 'ro=send' },
      /"ro" names send, which NOTIFY_TOOLS does not offer/,
    ],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('offers a tool nobody classified only while every group is offered', async () => {
    const { z } = await import('zod');
    const own = {
      name: 'embedder_tool',
      title: 'Own',
      description: 'An embedder tool.',
      input: z.object({}),
      outputSchema: { type: 'object' },
      annotations: {},
      handler: async () => ({}),
    };
    const catalog = buildCatalog(loadConfig({}), [own]).flat;
    expect(offeredCatalog(catalog, ['send', 'status', 'banners', 'read-only']).entries.has('embedder_tool')).toBe(true);
    expect(offeredCatalog(catalog, ['send', 'status', 'banners']).entries.has('embedder_tool')).toBe(false);
  });

  it('narrows every profile to the groups, with its own fingerprint, and gives every tool a group', () => {
    const config = loadConfig({});
    const catalog = buildCatalog(config);
    for (const profile of PROFILES) {
      const all = catalog[profile];
      expect(offeredCatalog(all, config.tools.groups)).toBe(all);
      // Every built-in tool has a group: none is withheld by accident, or let through one.
      for (const entry of all.entries.values()) expect(entry.groups.length, entry.tool.name).toBeGreaterThan(0);
      const send = offeredCatalog(all, ['send']);
      expect(send.tools.length).toBeGreaterThan(0);
      expect(send.tools.every((t) => /^(send_|edit_notification$|retract_notification$)/.test(t.name))).toBe(true);
      const ro = offeredCatalog(all, ['read-only']);
      expect(ro.tools.map((t) => t.name)).toEqual(['get_notification', 'list_banners']);
      expect([...ro.entries.keys()]).toEqual(['get_notification', 'list_banners']);
      expect(ro.fingerprint).not.toBe(all.fingerprint);
      expect(offeredCatalog(all, ['read-only'])).toBe(ro);
      // Groups overlap: status and read-only both hold get_notification, listed once.
      expect(offeredCatalog(all, ['status', 'read-only']).tools.map((t) => t.name)).toEqual(['get_notification', 'list_banners']);
    }
  });
});
