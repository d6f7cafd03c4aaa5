/** The tools line of `notify-mcp doctor`: which tool groups the server offers, and what each token client is offered. */
import { TOOL_GROUPS, type Config } from '../../config/config.js';
import { pass, type Check } from '../../core/check.js';
import { buildCatalog, offeredCatalog } from '../../mcp/catalog.js';
import { offeredGroups } from '../../mcp/tool-groups.js';

export function toolsCheck(config: Config): Check {
  const catalog = buildCatalog(config);
  const offer = (groups: readonly string[], names: string[]) =>
    `${groups.length === TOOL_GROUPS.length ? 'every group' : groups.join('+')} (${names.length ? names.join(', ') : 'no tool'})`;
  const parts = [
    `the server offers ${offer(
      config.tools.groups,
      offeredCatalog(catalog[config.defaultProfile], config.tools.groups).tools.map((t) => t.name),
    )}`,
  ];
  for (const [client, profile] of new Map(config.http.tokens.map((t) => [t.client, t.profile]))) {
    const groups = offeredGroups(config, client);
    parts.push(
      `token ${client}: ${offer(
        groups,
        offeredCatalog(catalog[profile ?? config.defaultProfile], groups).tools.map((t) => t.name),
      )}`,
    );
  }
  return pass('tools', parts.join('; '));
}
