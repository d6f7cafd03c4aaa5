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
    // Own entries only: a client named `constructor` or `__proto__` must not find Object's.
    (inputs.clientName !== undefined && Object.hasOwn(config.clientProfiles, inputs.clientName)
      ? config.clientProfiles[inputs.clientName]
      : undefined) ??
    config.defaultProfile
  );
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
