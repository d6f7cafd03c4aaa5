/**
 * NOTIFY_APPROVAL: which sends need a person's approval, as a comma list of rules any one of
 * which makes a send need it (parseApprovalRules); empty or unset, none does.
 */
import { ConfigError, list } from '../core/env.js';
import { describeValue } from '@notify-mcp/union';

export type ApprovalRule =
  | { kind: 'all' }
  | { kind: 'first-contact' }
  | { kind: 'channel'; via: string }
  | { kind: 'recipients'; over: number }
  /** A rule a channel module declares (`approvalRules`), by name. */
  | { kind: 'channel-rule'; name: string };

/**
 * NOTIFY_APPROVAL_MODE: who is asked. `ask`: the client asks its user (elicitation), and a
 * client that cannot gets APPROVAL_REQUIRED; `console`: every held send waits for a person
 * in the operator console; `ask-then-console`: the client asks when it can, else the console.
 */
export const APPROVAL_MODES = ['ask', 'console', 'ask-then-console'] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

/** What the parser must know of the channels: their names, and the rules each declares. */
export interface RuleSource {
  name: string;
  approvalRuleNames: readonly string[];
}

/** The rule as an operator writes it: what a person reads as the reason. */
export function ruleName(rule: ApprovalRule): string {
  switch (rule.kind) {
    case 'all':
    case 'first-contact':
      return rule.kind;
    case 'channel':
      return rule.via;
    case 'recipients':
      return `recipients>${rule.over}`;
    case 'channel-rule':
      return rule.name;
  }
}

/**
 * The rules:
 * - `all`: every send;
 * - `first-contact`: a recipient no person has approved on that channel yet;
 * - a channel name (`sms`, `email`, `slack`): every send on it;
 * - `recipients>N`: a send that names more than N recipients;
 * - a channel's own rule (Slack's `broadcast`: a broadcast mention, when the operator allows
 *   them at all), declared by its module (src/channels/<name>/).
 */
export function parseApprovalRules(raw: string | undefined, channels: readonly RuleSource[]): ApprovalRule[] {
  const channelRules = new Set(channels.flatMap((c) => c.approvalRuleNames));
  const rules = list(raw ?? '').map((item): ApprovalRule => {
    const rule = item.toLowerCase();
    if (rule === 'all' || rule === 'first-contact') return { kind: rule };
    if (channels.some((c) => c.name === rule)) return { kind: 'channel', via: rule };
    if (channelRules.has(rule)) return { kind: 'channel-rule', name: rule };
    const over = /^recipients\s*>\s*(\d+)$/.exec(rule);
    if (over) return { kind: 'recipients', over: Number(over[1]) };
    const known = ['all', 'first-contact', ...channels.map((c) => c.name), ...channelRules, 'recipients>N'];
    throw new ConfigError(
      `NOTIFY_APPROVAL: ${describeValue(item)} is not a rule; use a comma list of ${known.join(', ')} (e.g. NOTIFY_APPROVAL=first-contact,sms,recipients>5)`,
    );
  });
  // The same rule twice would list the same reason twice. (A Set: findIndex per rule took
  // minutes on 60,000 rules in an --env-file.)
  const seen = new Set<string>();
  return rules.filter((r) => !seen.has(ruleName(r)) && seen.add(ruleName(r)));
}

/** One sentence for the tool description: when a person may be asked, and what the answers mean. */
export function describeApproval(rules: readonly ApprovalRule[], labels: ReadonlyMap<string, string>): string | undefined {
  if (rules.length === 0) return undefined;
  const when = rules.map((rule) => {
    switch (rule.kind) {
      case 'all':
        return 'every send';
      case 'first-contact':
        return 'a recipient no one has approved on that channel yet';
      case 'channel':
        return `every ${labels.get(rule.via) ?? rule.via} send`;
      case 'recipients':
        return `more than ${rule.over} recipients`;
      case 'channel-rule':
        return `the ${rule.name} rule`;
    }
  });
  return (
    `Approval: this server asks a person to approve ${when.join('; ')} (through the client, MCP elicitation) and sends only the exact message approved; ` +
    'a decline is APPROVAL_DECLINED, and a client that cannot ask gets APPROVAL_REQUIRED (nothing is sent either way).'
  );
}
