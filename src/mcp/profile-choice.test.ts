import { describe, expect, it } from 'vitest';
import type { Profile } from '../config/config.js';
import { clientNameKey, profileByName, selectProfile } from './profile-choice.js';

const profiles: Record<string, Profile> = { 'ops-agent': 'oneOf', Notify: 'per-channel', 'billing bot': 'nested' };
const config = { clientProfiles: profiles, defaultProfile: 'flat' as Profile };

describe('profile by client name', () => {
  it('matches a name that came through mcp-remote, whatever its version', () => {
    expect(profileByName(profiles, 'ops-agent (via mcp-remote 0.15.1)')).toBe('oneOf');
    expect(profileByName(profiles, 'ops-agent (via mcp-remote 0.1.29)')).toBe('oneOf');
    expect(selectProfile(config, { clientName: 'billing bot (via mcp-remote 0.15.1)' })).toBe('nested');
  });

  it("matches an SDK's server label whatever its case and outer spaces", () => {
    // OpenAI Agents (`new MCPServerStdio({ name })`) and Mastra (the `servers` key) send the label.
    expect(profileByName(profiles, 'notify')).toBe('per-channel');
    expect(profileByName(profiles, ' NOTIFY ')).toBe('per-channel');
    expect(profileByName(profiles, 'Billing Bot')).toBe('nested');
  });

  it('an exact entry wins over a folded one', () => {
    const both: Record<string, Profile> = { Ops: 'nested', ops: 'oneOf' };
    expect(profileByName(both, 'Ops')).toBe('nested');
    expect(profileByName(both, 'ops')).toBe('oneOf');
  });

  it('matches nothing else: a different name, a suffix in the middle, a bare bridge', () => {
    expect(profileByName(profiles, 'ops-agent-2')).toBeUndefined();
    expect(profileByName(profiles, 'ops (via x) agent')).toBeUndefined();
    expect(profileByName(profiles, '(via mcp-remote 0.15.1)')).toBeUndefined();
    expect(profileByName(profiles, '')).toBeUndefined();
    expect(selectProfile(config, { clientName: 'someone' })).toBe('flat');
    for (const name of ['constructor', '__proto__', 'toString (via mcp-remote 1)']) expect(profileByName(profiles, name)).toBeUndefined();
  });

  it('the key strips only a trailing (via …) group', () => {
    expect(clientNameKey('Claude Code (via mcp-remote 0.15.1)')).toBe('claude code');
    expect(clientNameKey('a (b)')).toBe('a (b)');
  });
});
