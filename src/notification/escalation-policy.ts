/**
 * NOTIFY_ESCALATIONS as the send path takes it (DESIGN section 11, Escalation): named
 * policies of ordered steps, each a channel, a recipient and a delay after the first send.
 * Parsed and checked at start by src/config/escalations.ts.
 */

export interface EscalationStep {
  via: string;
  to: string;
  /** After the first send's time. */
  delayMs: number;
  /** The step as the operator wrote it (`sms:+14155550100@5m`), for messages. */
  text: string;
}

export interface EscalationPolicy {
  name: string;
  steps: readonly EscalationStep[];
}

/** A policy in one line, for doctor and the start-up log: `oncall: slack:#ops at once, then sms:… after 5m`. */
export function describePolicy(p: EscalationPolicy): string {
  return `${p.name}: ${p.steps.map((s) => `${s.via}:${s.to} ${s.delayMs === 0 ? 'at once' : `after ${delayWords(s.delayMs)}`}`).join(', then ')}`;
}

export function delayWords(ms: number): string {
  const s = ms / 1000;
  if (s % 3600 === 0) return `${s / 3600}h`;
  if (s % 60 === 0) return `${s / 60}m`;
  return `${s}s`;
}

/** Each policy's name and its longest delay in seconds: what the branches need (the enum, the expiry check). */
export function policyDelays(policies: readonly EscalationPolicy[]): ReadonlyMap<string, number> {
  return new Map(policies.map((p) => [p.name, Math.max(0, ...p.steps.map((s) => s.delayMs / 1000))]));
}
