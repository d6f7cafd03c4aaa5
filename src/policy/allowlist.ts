/**
 * Recipient allowlists (DESIGN section 3), checked before any live send so that an agent
 * that read a prompt injection cannot reach arbitrary recipients. Each channel's entry
 * syntax and matching live in its own matcher (src/channels/<name>/allowlist.ts); an entry
 * a matcher cannot read is refused at start, naming it, rather than silently matching
 * something else or nothing.
 *
 * `undefined` (a dry-run channel: nothing leaves the machine) allows everything; `*` allows
 * any recipient; an empty list allows none.
 */
import type { Allowlist } from '../config.js';
import { emailMatcher } from '../channels/email/allowlist.js';
import type { RecipientMatcher } from './matcher.js';
import { slackMatcher } from '../channels/slack/allowlist.js';
import { smsMatcher } from '../channels/sms/allowlist.js';

export type Via = 'email' | 'sms' | 'slack';

const MATCHERS: Record<Via, RecipientMatcher> = { email: emailMatcher, sms: smsMatcher, slack: slackMatcher };

export function isAllowed(via: Via, recipient: string, allow: Allowlist | undefined): boolean {
  if (allow === undefined || allow.any) return true;
  return MATCHERS[via].allows(recipient, allow.entries);
}

/** Why `entry` cannot be an entry of this channel's allowlist; undefined when it can. */
export function allowEntryProblem(via: Via, entry: string): string | undefined {
  return MATCHERS[via].entryProblem(entry);
}

/** The variable an operator edits to allow a recipient, for error messages. */
export const ALLOW_VARIABLE: Record<Via, string> = {
  email: 'NOTIFY_EMAIL_ALLOW',
  sms: 'NOTIFY_SMS_ALLOW',
  slack: 'NOTIFY_SLACK_ALLOW',
};
