/**
 * Send caps (NOTIFY_CAPS, `*:sms=100/day,ops-bot:email_recipients=500/hour`): what one
 * client may send per hour or per UTC day, counted in the store (Store.chargeCaps) at the
 * moment a send leaves, so replicas share one count and a scheduled send counts when it is
 * released. A measure is a channel's name (messages) or one its module declares
 * (`sms_segments`, `email_recipients`). Unlike the rate limits (sliding windows, a retry
 * later), a cap is a budget for a fixed period: past it, CAP_REACHED says when it resets.
 */
import { ConfigError, list } from '../core/env.js';
import { errors, NotifyError } from '../core/errors.js';
import type { CapCounter, CountersPort } from '../store/ports/counters.js';

export type CapPeriod = 'hour' | 'day';

export interface CapRule {
  /** A client name, or `*`: each client alone. */
  client: string;
  measure: string;
  limit: number;
  period: CapPeriod;
}

const PERIOD_MS: Record<CapPeriod, number> = { hour: 3_600_000, day: 86_400_000 };
const ANONYMOUS = '(anonymous)';

/** `measures`: every measure a cap may name (the channels' names and the measures they declare). */
export function parseCaps(raw: string | undefined, measures: readonly string[]): CapRule[] {
  return list(raw ?? '').map((item) => {
    const m = /^([^:=,\s]+):([a-z0-9_-]+)=(\d+)\/(hour|day)$/.exec(item);
    if (!m) throw new ConfigError(`NOTIFY_CAPS: "${item}" must look like *:sms=100/day or ops-bot:email_recipients=500/hour`);
    if (!measures.includes(m[2]!)) throw new ConfigError(`NOTIFY_CAPS: "${m[2]}" is not a measure; use one of ${measures.join(', ')}`);
    return { client: m[1]!, measure: m[2]!, limit: Number(m[3]), period: m[4] as CapPeriod };
  });
}

/** When the period holding `now` ends: the next full hour, or the next UTC midnight. */
export function periodEnd(period: CapPeriod, now: number): number {
  const size = PERIOD_MS[period];
  return Math.floor(now / size) * size + size;
}

export const capKey = (client: string, measure: string, period: CapPeriod) => JSON.stringify([client, measure, period]);

/** The rules that apply to `client`: a rule naming it replaces the `*` rule of the same measure and period. */
export function rulesFor(rules: readonly CapRule[], client: string): CapRule[] {
  const own = rules.filter((r) => r.client === client);
  return [...own, ...rules.filter((r) => r.client === '*' && !own.some((o) => o.measure === r.measure && o.period === r.period))];
}

/** Charged once a send's payload is built, just before it leaves; rejects with NotifyError('CAP_REACHED'). */
export interface CapGate {
  /** `amount(measure)`: how much of a measure this send uses (undefined: it does not count against it). */
  charge(client: string | null, via: string, amount: (measure: string) => number | undefined, now: number): Promise<void>;
}

export function createCapGate(rules: readonly CapRule[], store: CountersPort): CapGate | undefined {
  if (rules.length === 0) return undefined;
  return {
    async charge(client, via, amount, now) {
      const who = client ?? ANONYMOUS;
      const applying = rulesFor(rules, who).flatMap((r) => {
        const n = amount(r.measure);
        return n === undefined || n <= 0 ? [] : [{ rule: r, n }];
      });
      if (applying.length === 0) return;
      const decision = await store.chargeCaps(
        applying.map(({ rule, n }) => ({
          key: capKey(who, rule.measure, rule.period),
          limit: rule.limit,
          amount: n,
          resets_at: periodEnd(rule.period, now),
        })),
        now,
      );
      if (decision.admitted) return;
      const hit = applying.find(({ rule }) => capKey(who, rule.measure, rule.period) === decision.key)!;
      const resetsAt = new Date(decision.resets_at).toISOString();
      throw errors.capReached(
        `${who} has used ${decision.used} of its cap of ${hit.rule.limit} ${hit.rule.measure} per ${hit.rule.period}, and this send needs ${hit.n} more; nothing was sent. The cap resets at ${resetsAt}: send then, or ask the operator to raise NOTIFY_CAPS.`,
        { via, resetsAt },
      );
    },
  };
}

/** What each client has left of each cap, for doctor: from the counters in the store; a client without a counter has all of it. */
export function capsLeft(
  rules: readonly CapRule[],
  counters: readonly CapCounter[],
): Array<{ client: string; rule: CapRule; used: number; left: number; resets_at: number | null }> {
  const used = new Map(counters.map((c) => [c.key, c]));
  const clients = new Set<string>(rules.filter((r) => r.client !== '*').map((r) => r.client));
  for (const c of counters) {
    const parsed = JSON.parse(c.key) as unknown;
    if (Array.isArray(parsed) && typeof parsed[0] === 'string') clients.add(parsed[0]);
  }
  const out: Array<{ client: string; rule: CapRule; used: number; left: number; resets_at: number | null }> = [];
  for (const client of [...clients].sort()) {
    for (const rule of rulesFor(rules, client)) {
      const c = used.get(capKey(client, rule.measure, rule.period));
      out.push({ client, rule, used: c?.used ?? 0, left: Math.max(0, rule.limit - (c?.used ?? 0)), resets_at: c?.resets_at ?? null });
    }
  }
  if (rules.some((r) => r.client === '*')) {
    for (const rule of rules.filter((r) => r.client === '*')) out.push({ client: '*', rule, used: 0, left: rule.limit, resets_at: null });
  }
  return out;
}
