/**
 * `notify-mcp schema [--profile P]`: the tools/list a client of that profile receives, with its
 * hashes; and, when tokens are set, what each token client is offered (its profile, its tool
 * groups, the tools they leave and that list's fingerprint).
 */
import { ConfigError, PROFILES, type Config, type Profile } from '../config/config.js';
import { buildCatalog, offeredCatalog } from '../mcp/catalog.js';
import { offeredGroups } from '../mcp/tool-groups.js';

export function schemaCommand(config: Config, profileArg: string | undefined, out: (text: string) => void): number {
  const profile = (profileArg ?? config.defaultProfile) as Profile;
  if (!PROFILES.includes(profile)) throw new ConfigError(`--profile must be one of ${PROFILES.join(', ')}`);
  const catalog = buildCatalog(config);
  const c = offeredCatalog(catalog[profile], config.tools.groups);
  const tokens = Object.fromEntries(
    [...new Map(config.http.tokens.map((t) => [t.client, t.profile])).entries()].map(([client, own]) => {
      const groups = offeredGroups(config, client);
      const view = offeredCatalog(catalog[own ?? profile], groups);
      return [client, { profile: own ?? profile, groups, tools: view.tools.map((t) => t.name), fingerprint: view.fingerprint }];
    }),
  );
  const view = { profile, groups: config.tools.groups, fingerprint: c.fingerprint, hashes: c.hashes, tools: c.tools };
  out(JSON.stringify(config.http.tokens.length ? { ...view, tokens } : view, null, 2));
  return 0;
}
