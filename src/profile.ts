/**
 * Which wire shape a connection sees (DESIGN section 1), first match wins: the HTTP
 * credential's profile, the endpoint (`/mcp/<profile>`), the client's self-reported name,
 * then the default.
 */
import type { Config, Profile } from './config.js';

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
