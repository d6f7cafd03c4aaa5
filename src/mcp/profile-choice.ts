/**
 * Which wire shape a connection sees, first match wins: the HTTP
 * credential's profile, the endpoint (`/mcp/<profile>`), the client's self-reported name,
 * then the default.
 */
import type { Config, Profile } from '../config/config.js';
import { toolsVaryByToken } from './tool-groups.js';

export interface ProfileInputs {
  credentialProfile?: Profile;
  endpointProfile?: Profile;
  clientName?: string;
}

export function selectProfile(config: Pick<Config, 'clientProfiles' | 'defaultProfile'>, inputs: ProfileInputs): Profile {
  return (
    inputs.credentialProfile ??
    inputs.endpointProfile ??
    (inputs.clientName !== undefined ? profileByName(config.clientProfiles, inputs.clientName) : undefined) ??
    config.defaultProfile
  );
}

/**
 * Bridges rename the client they carry: mcp-remote sends `"<name> (via mcp-remote 0.15.1)"`.
 * The suffix names the bridge, not the caller, so it is no part of the name an entry matches.
 */
const BRIDGE_SUFFIX = /\s*\(via [^()]*\)$/;

/** The form both sides are compared in: bridge suffix off, outer spaces off, case folded. */
export function clientNameKey(name: string): string {
  return name.replace(BRIDGE_SUFFIX, '').trim().toLowerCase();
}

/**
 * A `NOTIFY_CLIENT_PROFILES` entry for this client name: the exact name first, then the
 * name compared by {@link clientNameKey}, so that `ops-agent` matches `ops-agent (via
 * mcp-remote 0.15.1)` and the label `Notify` an SDK sends for a server the user named so.
 * Own entries only: a client named `constructor` or `__proto__` must not find Object's.
 */
export function profileByName(profiles: Record<string, Profile>, name: string): Profile | undefined {
  if (Object.hasOwn(profiles, name)) return profiles[name];
  const key = clientNameKey(name);
  if (key === '') return undefined;
  for (const entry of Object.keys(profiles)) {
    if (clientNameKey(entry) === key) return profiles[entry];
  }
  return undefined;
}

/**
 * Whether callers of one endpoint can be given different tool lists: by their credential
 * (some token carries a profile, or its own tool groups: NOTIFY_TOKEN_TOOLS) or by their self-reported name (the clientInfo map, unless
 * the endpoint fixes the profile). Such a list is `cacheScope: "private"` under 2026-07-28:
 * a shared cache must not hand one caller's list to another.
 */
export function callerDependentList(
  config: Pick<Config, 'clientProfiles' | 'http' | 'tools'>,
  inputs: Pick<ProfileInputs, 'endpointProfile'> & { client?: string },
): boolean {
  const byCredential = inputs.client !== undefined && (config.http.tokens.some((t) => t.profile !== undefined) || toolsVaryByToken(config));
  const byClientInfo = inputs.endpointProfile === undefined && Object.keys(config.clientProfiles).length > 0;
  return byCredential || byClientInfo;
}
