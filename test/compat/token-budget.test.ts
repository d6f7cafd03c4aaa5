/**
 * Issue 40's context budget as a guard: every tool a model sees in the flat and per-channel
 * profiles, and each of those whole lists, stays within bench/token-budget.mjs, so that a
 * field or a sentence added later has to pay for itself (cut elsewhere, or raise the budget
 * knowingly, with its room for this round's fields said there). `npm run bench` prints the
 * same figures.
 */
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/mcp/catalog.js';
import { loadConfig } from '../../src/config/config.js';
import { FULL_ROUND_ENV, LIST_BUDGETS, limitOf, ROUND_LIMITS, TOOL_BUDGETS, toolTokens } from '../../bench/token-budget.mjs';

const catalog = buildCatalog(loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' }));
const tokens = (profile: keyof typeof LIST_BUDGETS) => catalog[profile].tools.map((t) => ({ name: t.name, tokens: toolTokens(t) }));

describe('context budget (o200k: name, description, input schema per tool)', () => {
  for (const profile of Object.keys(LIST_BUDGETS) as (keyof typeof LIST_BUDGETS)[]) {
    it(`${profile}: every tool within its budget`, () => {
      const over = tokens(profile)
        .filter((t) => t.tokens > (TOOL_BUDGETS[t.name as keyof typeof TOOL_BUDGETS]?.now ?? 0))
        .map((t) => `${t.name}: ${t.tokens} > ${TOOL_BUDGETS[t.name as keyof typeof TOOL_BUDGETS]?.now ?? 'no budget'}`);
      expect(over).toEqual([]);
    });

    it(`${profile}: the whole list within its budget`, () => {
      const whole = tokens(profile).reduce((n, t) => n + t.tokens, 0);
      expect(whole).toBeLessThanOrEqual(LIST_BUDGETS[profile].now);
    });
  }

  it("keeps the issue's limits once this round's fields are in: flat 1,600, per-channel 2,000, send_notification 850", () => {
    expect(limitOf(LIST_BUDGETS.flat)).toBeLessThanOrEqual(1600);
    expect(limitOf(LIST_BUDGETS['per-channel'])).toBeLessThanOrEqual(2000);
    expect(limitOf(TOOL_BUDGETS.send_notification)).toBeLessThanOrEqual(850);
  });

  it('counts a description the guard would see grow', () => {
    const tool = catalog.flat.tools.find((t) => t.name === 'send_notification')!;
    const grown = { ...tool, description: `${tool.description}${' Every call is checked.'.repeat(12)}` };
    expect(toolTokens(grown) - toolTokens(tool)).toBeGreaterThanOrEqual(60);
  });
});

describe("issue 40's budget with every field of the round in place", () => {
  // ask (NOTIFY_PUBLIC_URL), escalate with one policy, the webhook branch with two targets (FULL_ROUND_ENV).
  const full = buildCatalog(loadConfig(FULL_ROUND_ENV));
  const list = (p: 'flat' | 'per-channel') => full[p].tools.reduce((n, t) => n + toolTokens(t), 0);

  it('the flat list ≤ 1,600, send_notification ≤ 850, the per-channel list ≤ 2,000', () => {
    const send = toolTokens(full.flat.tools.find((t) => t.name === 'send_notification')!);
    const figures = { flat: list('flat'), send_notification: send, 'per-channel': list('per-channel') };
    console.info('every field of the round', figures);
    expect(JSON.stringify(full.flat.tools)).toContain('"escalate"');
    expect(figures.flat).toBeLessThanOrEqual(ROUND_LIMITS.flat);
    expect(figures.send_notification).toBeLessThanOrEqual(ROUND_LIMITS.send_notification);
    expect(figures['per-channel']).toBeLessThanOrEqual(ROUND_LIMITS['per-channel']);
  });
});
