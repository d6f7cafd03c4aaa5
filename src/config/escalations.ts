/**
 * NOTIFY_ESCALATIONS: `<name>=<channel>:<recipient>@<delay>,…;<name>=…`, e.g.
 * `oncall=slack:#ops@0,sms:+14155550100@5m,email:lead@example.com@15m`. Parsed in two steps:
 * the syntax first (the names and delays are what the branches need to be built), then, once
 * the channels are configured, each step against its channel, so that a step that could never
 * leave (no such channel, a recipient its branch or allowlist refuses) stops the start, named.
 */
import type { ConfiguredChannel } from '../channels/channel.js';
import { ConfigError } from '../core/env.js';
import type { EscalationPolicy, EscalationStep } from '../notification/escalation-policy.js';
import { isAllowed } from '../policy/allowlist.js';
import { describeValue } from '@notify-mcp/union';

const VARIABLE = 'NOTIFY_ESCALATIONS';
const NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const DELAY = /^(\d{1,6})(s|m|h)$/;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000 };
/** More steps than this is a page storm, not a policy. */
const MAX_STEPS = 10;
/** The longest life a question may have (ask.expires_in_s): a later step could never be answered. */
const MAX_DELAY_MS = 604_800_000;
const SHAPE = 'name=channel:recipient@delay,… (delay 0, or a number with s, m or h), policies separated by ;';

function delayOf(raw: string, where: string): number {
  if (raw === '0') return 0;
  const m = DELAY.exec(raw);
  if (!m) throw new ConfigError(`${VARIABLE}: ${where}: delay ${describeValue(raw)} must be 0 or a number with s, m or h (e.g. 5m)`);
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  if (ms > MAX_DELAY_MS) throw new ConfigError(`${VARIABLE}: ${where}: delay ${raw} is longer than a question lives (7 days at most)`);
  return ms;
}

function stepOf(raw: string, policy: string, n: number): EscalationStep {
  const where = `policy ${policy}, step ${n} (${describeValue(raw)})`;
  const colon = raw.indexOf(':');
  // The last @: an email recipient holds one too.
  const at = raw.lastIndexOf('@');
  if (colon < 1 || at <= colon + 1) throw new ConfigError(`${VARIABLE}: ${where} must be channel:recipient@delay; write ${SHAPE}`);
  return {
    via: raw.slice(0, colon).trim(),
    to: raw.slice(colon + 1, at).trim(),
    delayMs: delayOf(raw.slice(at + 1).trim(), where),
    text: raw,
  };
}

/** The policies as written; nothing is checked against the channels yet (checkEscalations). */
export function parseEscalations(raw: string | undefined): EscalationPolicy[] {
  if (!raw?.trim()) return [];
  const policies = raw
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((item): EscalationPolicy => {
      const eq = item.indexOf('=');
      const name = item.slice(0, eq).trim();
      if (eq < 1 || !NAME.test(name))
        throw new ConfigError(
          `${VARIABLE}: ${describeValue(item.slice(0, 40))} must start with a name (a-z, 0-9, _ or -) and =; write ${SHAPE}`,
        );
      const steps = item
        .slice(eq + 1)
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
        .map((s, i) => stepOf(s, name, i + 1));
      if (steps.length === 0) throw new ConfigError(`${VARIABLE}: policy ${name} has no steps; write ${SHAPE}`);
      if (steps.length > MAX_STEPS) throw new ConfigError(`${VARIABLE}: policy ${name} has ${steps.length} steps; at most ${MAX_STEPS}`);
      return { name, steps };
    });
  const names = policies.map((p) => p.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new ConfigError(`${VARIABLE}: policy ${twice} is defined twice; give each policy its own name`);
  return policies;
}

/**
 * Every step against its channel: one this server offers and can forward through, a recipient
 * its branch takes (a sample message built as a step's would be) and its allowlist passes.
 */
export function checkEscalations(policies: readonly EscalationPolicy[], channels: readonly ConfiguredChannel[]): void {
  const able = channels.filter((c) => c.channel.forward !== undefined).map((c) => c.name);
  for (const p of policies) {
    p.steps.forEach((s, i) => {
      const where = `${VARIABLE}: policy ${p.name}, step ${i + 1} (${s.text})`;
      const channel = channels.find((c) => c.name === s.via);
      if (!channel || !able.includes(s.via))
        throw new ConfigError(`${where}: ${describeValue(s.via)} is not a channel a step can go through; use one of ${able.join(', ')}`);
      const call = channel.channel.forward!(s.to, { subject: 'Escalation check', text: 'Escalation check' });
      const parsed = channel.branch.safeParse(call);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new ConfigError(
          `${where}: ${describeValue(s.to)} is not a recipient the ${channel.channel.label} channel takes (${issue?.message ?? 'refused'})`,
        );
      }
      if (!isAllowed(channel.channel.allowlist.matcher, s.to, channel.allow)) {
        const variable = channel.channel.allowlist.variable;
        throw new ConfigError(
          `${where}: ${describeValue(s.to)} is not on the ${s.via} allowlist (${variable}); add it to ${variable}, or change the step`,
        );
      }
    });
  }
}
