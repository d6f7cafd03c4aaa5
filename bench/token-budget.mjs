/**
 * Issue 40's context budget, in o200k tokens of what a host hands a model per tool (`name`,
 * `description` and the compact JSON of `inputSchema`, one per line): the budgets, the room
 * kept for the round's fields that do not exist yet, and the rows `npm run bench` prints
 * against them. test/compat/token-budget.test.ts fails when a tool or a list grows past its
 * budget, so that a field added later pays for itself.
 *
 *   node --import ./test/register.mjs bench/token-budget.mjs   (after `npm run build`)
 */
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { exact } from './lib/stats.mjs';

export function toolTokens(tool) {
  return encode(`${tool.name}\n${tool.description ?? ''}\n${JSON.stringify(tool.inputSchema)}`).length;
}

/**
 * What this round's fields are expected to cost (issue 40): `ask` and `escalate` on every
 * send tool, the webhook branch in send_notification. A field that lands moves its room into
 * `now`, so the sum stays the issue's limit. `ask` has landed (issue 37): its room is in `now`
 * (it costs 37 on the flat send_notification, 36 on each per-channel send tool, limits kept as
 * refinements rather than schema keywords; get_notification's wait_s 8 more).
 */
export const ROUND = { ask: 40, escalate: 15, webhook: 70 };

/**
 * Per tool: `now`, what it may cost today (the guard's limit), and `room`, kept for the
 * round's fields. send_notification's limit with them is the issue's 850; the other tools
 * have no field coming, and their limit is today's cost rounded up, so any growth is seen.
 */
export const TOOL_BUDGETS = {
  send_notification: { now: 765, room: { escalate: ROUND.escalate, webhook: ROUND.webhook } },
  send_email: { now: 430, room: { escalate: ROUND.escalate } },
  send_sms: { now: 290, room: { escalate: ROUND.escalate } },
  send_slack: { now: 380, room: { escalate: ROUND.escalate } },
  get_notification: { now: 105 },
  edit_notification: { now: 165 },
  retract_notification: { now: 85 },
  show_banner: { now: 225 },
  dismiss_banner: { now: 85 },
  list_banners: { now: 95 },
};

/**
 * Per profile, the whole tools/list. flat and per-channel carry the issue's limits (1,600 and
 * 2,000 with every field of the round); nested and oneOf have none, and are reported, not
 * guarded. per-channel's room is ask and escalate on its three send tools; the webhook branch
 * would be a fourth send tool there, for which the 2,000 leaves less than a send tool costs.
 */
export const LIST_BUDGETS = {
  flat: { now: 1515, room: { escalate: ROUND.escalate, webhook: ROUND.webhook } },
  'per-channel': { now: 1955, room: { escalate: 3 * ROUND.escalate } },
};

export const roomOf = (budget) => Object.values(budget.room ?? {}).reduce((n, t) => n + t, 0);
/** The limit with the round's fields in place: `now` plus its room. */
export const limitOf = (budget) => budget.now + roomOf(budget);

/** The peers the issue compares with (docs/tools.md gives their sources). */
export const PEERS = [
  { name: 'median MCP server, survey of 3,213 servers (cited)', tokens: 1905 },
  { name: "Vonage's MCP server, 13 tools (cited)", tokens: 1633 },
  { name: "Courier's MCP server (cited)", tokens: 16505 },
  { name: "Resend's send-email tool alone (cited)", tokens: 1240 },
];

const roomText = (budget) =>
  budget.room ? ` now; ${limitOf(budget).toLocaleString('en-US')} with ${Object.entries(budget.room).map(([f, t]) => `${f} ${t}`).join(', ')}` : '';

/** Every profile's whole list and each of its tools, against the budgets above. */
export function budgetRows(catalog) {
  const rows = [];
  const row = (name, tokens, budget, extra = {}) =>
    rows.push({
      section: '3. Context budget',
      name,
      unit: 'tokens',
      better: 'lower',
      value: exact(tokens),
      ...(budget ? { target: { max: budget.now, absolute: true, text: `≤ ${budget.now.toLocaleString('en-US')}${roomText(budget)}` } } : {}),
      ...extra,
    });
  for (const profile of ['flat', 'nested', 'oneOf', 'per-channel']) {
    const tools = catalog[profile].tools;
    const counted = tools.map((t) => ({ name: t.name, tokens: toolTokens(t) }));
    const whole = counted.reduce((n, t) => n + t.tokens, 0);
    row(`whole tools/list, ${profile}`, whole, LIST_BUDGETS[profile], { note: `${tools.length} tools` });
    // nested and oneOf have no budget of their own: their tools are reported beside flat's.
    const guarded = LIST_BUDGETS[profile] !== undefined;
    for (const t of counted) row(`${t.name}, ${profile}`, t.tokens, guarded ? TOOL_BUDGETS[t.name] : undefined);
  }
  for (const p of PEERS) rows.push({ section: '3. Context budget', name: p.name, unit: 'tokens', better: 'lower', value: exact(p.tokens), cited: true });
  return rows;
}

// Standalone: build first, then print every row and its verdict.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { buildCatalog } = await import('../dist/mcp/catalog.js');
  const { loadConfig } = await import('../dist/config/config.js');
  const { verdict } = await import('./lib/table.mjs');
  for (const r of budgetRows(buildCatalog(loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' })))) {
    console.log(`${String(r.value.median).padStart(6)}  ${r.name}${r.target ? `  [${r.target.text}: ${verdict(r)}]` : ''}`);
  }
}
