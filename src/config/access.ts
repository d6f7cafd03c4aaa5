/** Who may reach the server over HTTP, and with what: tokens, feed origins and streams, operators, tool groups. */
import { ConfigError, list } from '../core/env.js';
import { unstorableIn } from '../core/storable-text.js';
import { describeValue } from '@notify-mcp/union';
import { profile, TOOL_GROUPS, type HttpToken, type ToolGroup } from './profiles.js';

const TOKEN_RE = /^[A-Za-z0-9._~-]{16,}$/;

export function httpTokens(raw: string | undefined, variable = 'NOTIFY_HTTP_TOKENS', withProfile = true): HttpToken[] {
  if (!raw) return [];
  const shape = withProfile ? 'client:token[:profile]' : 'name:token';
  return list(raw).map((item): HttpToken => {
    const [client, token, prof, ...rest] = item.split(':');
    if (!client || !token || rest.length > 0 || (prof !== undefined && !withProfile)) {
      throw new ConfigError(`${variable}: ${describeValue(`${client ?? ''}:…`)} must be ${shape}`);
    }
    // The client name is recorded with every send and in every log line of its requests.
    const unstorable = unstorableIn(client);
    if (unstorable)
      throw new ConfigError(
        `${variable}: the client name ${describeValue(client)} holds ${unstorable}, which this server cannot store; rename it`,
      );
    if (!TOKEN_RE.test(token)) {
      throw new ConfigError(`${variable}: the token of ${describeValue(client)} must match [A-Za-z0-9._~-]{16,}`);
    }
    return prof ? { client, token, profile: profile(prof, variable) } : { client, token };
  });
}

/**
 * A token is a client's identity: shared, it would sign one client's sends with the other's
 * name (one client may hold two tokens, to rotate them); and a feed token that is also a tool
 * token would not be read-only.
 */
export function assertDistinctTokens(tools: HttpToken[], feed: HttpToken[]): void {
  const owner = new Map<string, string>();
  for (const [variable, tokens] of [
    ['NOTIFY_HTTP_TOKENS', tools],
    ['NOTIFY_FEED_TOKENS', feed],
  ] as const) {
    for (const { client, token } of tokens) {
      const first = owner.get(token);
      if (first !== undefined) {
        throw new ConfigError(`${variable}: ${describeValue(first)} and ${describeValue(client)} have the same token; give each its own`);
      }
      owner.set(token, client);
    }
  }
}

/** `https://app.example.com` (scheme, host, port: what a browser sends as Origin), or `*`. */
export function feedOrigins(raw: string | undefined): string[] {
  return list(raw ?? '').map((item) => {
    if (item === '*') return item;
    let origin: string | undefined;
    try {
      origin = new URL(item).origin;
    } catch {
      // refused below
    }
    if (origin === undefined || origin === 'null' || origin !== item.replace(/\/$/, '').toLowerCase()) {
      throw new ConfigError(
        `NOTIFY_FEED_ORIGINS: ${describeValue(item)} is not an origin; list scheme://host[:port] with no path, e.g. https://app.example.com`,
      );
    }
    return origin;
  });
}

/** Operators are token clients only: a clientInfo name is self-reported, so it can never be one. */
export function operators(raw: string | undefined, tokens: readonly HttpToken[]): string[] {
  const names = list(raw ?? '');
  for (const name of names) {
    if (!tokens.some((t) => t.client === name)) {
      throw new ConfigError(
        `NOTIFY_OPERATOR_CLIENTS: ${describeValue(name)} is no client of NOTIFY_HTTP_TOKENS; an operator is a token's client name (e.g. NOTIFY_HTTP_TOKENS=ops:<token> NOTIFY_OPERATOR_CLIENTS=ops)`,
      );
    }
  }
  return names;
}

function toolGroups(names: string[], variable: string, what: string): ToolGroup[] {
  if (names.length === 0)
    throw new ConfigError(`${variable}: ${what} names no tool group; use ${TOOL_GROUPS.join(', ')}, or unset it for all`);
  for (const name of names) {
    if (!(TOOL_GROUPS as readonly string[]).includes(name)) {
      throw new ConfigError(`${variable}: ${describeValue(name)} in ${what} is not a tool group; use ${TOOL_GROUPS.join(', ')}`);
    }
  }
  return [...new Set(names)] as ToolGroup[];
}

/** The tool groups the server offers, and the narrower set of each token client named. */
export interface ToolSettings {
  groups: ToolGroup[];
  byClient: Record<string, ToolGroup[]>;
}

/**
 * NOTIFY_TOOLS (comma list) and NOTIFY_TOKEN_TOOLS (`client=group+group,…`). A token's set
 * only narrows the server's: a group the server does not offer is refused, not ignored,
 * since whoever wrote it expected that client to have it. Token clients only: a clientInfo
 * name is self-reported, so narrowing by it would be undone by a rename.
 */
export function tools(offered: string | undefined, byToken: string | undefined, tokens: readonly HttpToken[]): ToolSettings {
  const groups = offered ? toolGroups(list(offered), 'NOTIFY_TOOLS', 'the list') : [...TOOL_GROUPS];
  const byClient: Record<string, ToolGroup[]> = {};
  for (const item of list(byToken ?? '')) {
    const [client, set, ...rest] = item.split('=');
    if (!client || !set || rest.length > 0)
      throw new ConfigError(`NOTIFY_TOKEN_TOOLS: ${describeValue(item)} must be client=group[+group…], e.g. status-bot=status+banners`);
    if (!tokens.some((t) => t.client === client)) {
      throw new ConfigError(
        `NOTIFY_TOKEN_TOOLS: ${describeValue(client)} is no client of NOTIFY_HTTP_TOKENS; name a token's client (e.g. NOTIFY_HTTP_TOKENS=ro:<token> NOTIFY_TOKEN_TOOLS=ro=read-only)`,
      );
    }
    if (Object.hasOwn(byClient, client))
      throw new ConfigError(`NOTIFY_TOKEN_TOOLS: ${describeValue(client)} is named twice; join its groups with +`);
    const own = toolGroups(
      set
        .split('+')
        .map((g) => g.trim())
        .filter(Boolean),
      'NOTIFY_TOKEN_TOOLS',
      describeValue(client),
    );
    const withheld = own.filter((g) => !groups.includes(g));
    if (withheld.length) {
      throw new ConfigError(
        `NOTIFY_TOKEN_TOOLS: ${describeValue(client)} names ${withheld.join(', ')}, which NOTIFY_TOOLS does not offer; a token's groups only narrow the server's (${groups.join(', ')})`,
      );
    }
    byClient[client] = own;
  }
  return { groups, byClient };
}
