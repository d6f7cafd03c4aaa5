/**
 * Tool gating (DESIGN section 10): which groups each tool belongs to, and which groups a
 * caller is offered (offeredCatalog in catalog.ts narrows a profile's list to them). A tool
 * not offered is neither listed nor callable: tools/call answers it as an unknown tool.
 */
import type { Config, ToolGroup } from '../config/config.js';

/**
 * The object tools' groups, one line per tool. The send tools (send_notification and the
 * per-channel ones, whose names come from the channels) are `send` without a line here.
 */
export const TOOL_GROUPS_BY_NAME: Readonly<Record<string, readonly ToolGroup[]>> = {
  get_notification: ['status', 'read-only'],
  show_banner: ['banners'],
  dismiss_banner: ['banners'],
  list_banners: ['banners', 'read-only'],
};

export const SEND_GROUPS: readonly ToolGroup[] = ['send'];

/** An object tool's groups; a tool without a line is a bug, said at catalog build, not a tool silently offered or hidden. */
export function objectToolGroups(name: string): readonly ToolGroup[] {
  const groups = Object.hasOwn(TOOL_GROUPS_BY_NAME, name) ? TOOL_GROUPS_BY_NAME[name] : undefined;
  if (!groups) throw new Error(`tool ${name} has no group in src/mcp/tool-groups.ts; add its line to TOOL_GROUPS_BY_NAME`);
  return groups;
}

/** The groups a caller is offered: its token client's own set, else the server's. */
export function offeredGroups(config: Pick<Config, 'tools'>, client: string | undefined): readonly ToolGroup[] {
  return client !== undefined && Object.hasOwn(config.tools.byClient, client) ? config.tools.byClient[client]! : config.tools.groups;
}

/** Whether some caller of this server can be offered another set of tools than another caller. */
export function toolsVaryByToken(config: Pick<Config, 'tools'>): boolean {
  return Object.keys(config.tools.byClient).length > 0;
}
