/** `notify-mcp schema [--profile P]`: the tools/list a client of that profile receives, with its hashes. */
import { ConfigError, PROFILES, type Config, type Profile } from '../config/config.js';
import { buildCatalog } from '../mcp/catalog.js';

export function schemaCommand(config: Config, profileArg: string | undefined, out: (text: string) => void): number {
  const profile = (profileArg ?? config.defaultProfile) as Profile;
  if (!PROFILES.includes(profile)) throw new ConfigError(`--profile must be one of ${PROFILES.join(', ')}`);
  const c = buildCatalog(config)[profile];
  out(JSON.stringify({ profile, fingerprint: c.fingerprint, hashes: c.hashes, tools: c.tools }, null, 2));
  return 0;
}
