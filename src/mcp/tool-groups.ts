/**
 * Tool gating (DESIGN section 10): which groups each tool belongs to, and which groups a
 * caller is offered (offeredCatalog in catalog.ts narrows a profile's list to them). A tool
 * not offered is neither listed nor callable: tools/call answers it as an unknown tool.
 */
import { TOOL_GROUPS, type Config, type ToolGroup } from '../config/config.js';

/**
 * The object tools' groups, one line per tool. The send tools (send_notification and the
 * per-channel ones, whose names come from the channels) are `send` without a line here.
 */
export const TOOL_GROUPS_BY_NAME: Readonly<Record<string, readonly ToolGroup[]>> = {
  get_notification: ['status', 'read-only'],
  show_banner: ['banners'],
  dismiss_banner: ['banners'],
  list_banners: ['banners', 'read-only'],
  // DESIGN section 8's new verbs, in send (lines ahead of the tools, which other work adds).
  edit_notification: ['send'],
  retract_notification: ['send'],
};

export const SEND_GROUPS: readonly ToolGroup[] = ['send'];

/**
 * An object tool's groups. A tool with no line here (an embedder's own, passed to
 * buildCatalog) belongs to no group: it is offered only while every group is, so narrowing
 * never lets through a tool nobody classified.
 */
export function objectToolGroups(name: string): readonly ToolGroup[] {
  return Object.hasOwn(TOOL_GROUPS_BY_NAME, name) ? TOOL_GROUPS_BY_NAME[name]! : [];
}

/** The groups a caller is offered: its token client's own set, else the server's. */
export function offeredGroups(config: Pick<Config, 'tools'>, client: string | undefined): readonly ToolGroup[] {
  return client !== undefined && Object.hasOwn(config.tools.byClient, client) ? config.tools.byClient[client]! : config.tools.groups;
}

/** Whether some caller of this server can be offered another set of tools than another caller. */
export function toolsVaryByToken(config: Pick<Config, 'tools'>): boolean {
  return Object.keys(config.tools.byClient).length > 0;
}

/**
 * Whether object tool `name` is offered under `groups`, by the rule offeredCatalog applies. What
 * a tool reaches by another door (banner resources, the console's banner page) is offered by
 * the same answer, so a withheld group is withheld everywhere.
 */
export function toolOffered(name: string, groups: readonly ToolGroup[]): boolean {
  return TOOL_GROUPS.every((g) => groups.includes(g)) || objectToolGroups(name).some((g) => groups.includes(g));
}

/** Banner resources read what list_banners reads: offered with it. */
export const bannerResourcesOffered = (groups: readonly ToolGroup[]): boolean => toolOffered('list_banners', groups);
