/**
 * Recipient allowlists, checked before any send so that an agent that read a prompt injection
 * cannot reach arbitrary recipients. Each channel brings its entry syntax and matcher; an
 * entry its matcher cannot read is refused at start, naming it.
 */
import { ConfigError, list, type Env } from '../core/env.js';
import type { RecipientMatcher } from './matcher.js';
import { describeValue } from '@notify-mcp/union';

/** `*` allows any recipient; an empty list allows none. */
export interface Allowlist {
  any: boolean;
  entries: string[];
}

/** `undefined` (a dry-run channel without a list: nothing leaves the machine) allows everything. */
export function isAllowed(matcher: RecipientMatcher, recipient: string, allow: Allowlist | undefined): boolean {
  if (allow === undefined || allow.any) return true;
  return matcher.allows(recipient, allow.entries);
}

/**
 * A channel's allowlist from its variable. A live channel must have one: the server refuses
 * to start and names the variable. Entries are kept as written (Slack IDs are
 * case-sensitive); each matcher folds what it compares.
 */
export function readAllowlist(
  env: Env,
  variable: string,
  channel: string,
  matcher: RecipientMatcher,
  live: boolean,
): Allowlist | undefined {
  const raw = env[variable];
  if (raw === undefined) {
    if (live) {
      throw new ConfigError(
        `${channel} is live (credentials are set) but ${variable} is not: set ${variable} to the recipients it may reach (comma list; "*" allows any)`,
      );
    }
    return undefined;
  }
  const entries = list(raw).filter((e) => e !== '*');
  // An entry the matcher cannot read would match nothing, or the wrong thing: refuse it now.
  for (const entry of entries) {
    const problem = matcher.entryProblem(entry);
    if (problem) throw new ConfigError(`${variable}: ${describeValue(entry)} ${problem}`);
  }
  return { any: list(raw).includes('*'), entries };
}
