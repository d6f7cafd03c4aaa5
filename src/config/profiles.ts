/** The names a configuration picks from: union profiles, tool groups, and the HTTP tokens that carry them. */
import { ConfigError, list } from '../core/env.js';
import { describeValue } from '@notify-mcp/union';

export const PROFILES = ['flat', 'nested', 'oneOf', 'per-channel'] as const;
export type Profile = (typeof PROFILES)[number];

/** Tool groups a host can switch on (NOTIFY_TOOLS) and narrow per token client (NOTIFY_TOKEN_TOOLS). */
export const TOOL_GROUPS = ['send', 'status', 'banners', 'read-only'] as const;
export type ToolGroup = (typeof TOOL_GROUPS)[number];

export interface HttpToken {
  client: string;
  token: string;
  profile?: Profile;
}

export function profile(value: string, variable: string): Profile {
  if ((PROFILES as readonly string[]).includes(value)) return value as Profile;
  throw new ConfigError(`${variable}: unknown profile ${describeValue(value)}; use one of ${PROFILES.join(', ')}`);
}

/** NOTIFY_CLIENT_PROFILES: `clientName=profile`, comma-separated. */
export function clientProfiles(raw: string | undefined): Record<string, Profile> {
  const out: Record<string, Profile> = {};
  for (const item of list(raw ?? '')) {
    const [name, prof] = item.split('=');
    if (!name || !prof) throw new ConfigError(`NOTIFY_CLIENT_PROFILES: ${describeValue(item)} must be clientName=profile`);
    out[name] = profile(prof, 'NOTIFY_CLIENT_PROFILES');
  }
  return out;
}
