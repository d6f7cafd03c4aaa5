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
 * What this round's fields were expected to cost (issue 40): `escalate` on every send tool, the
 * webhook branch in send_notification. `ask` has landed, its cost in `now`: 35 tokens of schema
 * and 20 of words for its limits, which issue 40 wants visible (test/compat/ask-budget.test.ts).
 * A field that lands moves its room into `now`, so the sum stays the issue's limit.
 */
export const ROUND = { ask: 40, escalate: 15, webhook: 70 };

/**
 * Per tool: `now`, what it may cost today without webhook targets (the guard's limit), and
 * `room`, kept for the round's fields. send_notification's limit with them is the issue's 850;
 * the other tools have no field coming, and their limit is today's cost rounded up, so any
 * growth is seen.
 */
export const TOOL_BUDGETS = {
  send_notification: { now: 765, room: { escalate: ROUND.escalate, webhook: ROUND.webhook } },
  send_email: { now: 380, room: { escalate: ROUND.escalate } },
  send_sms: { now: 275, room: { escalate: ROUND.escalate } },
  send_slack: { now: 345, room: { escalate: ROUND.escalate } },
  send_webhook: { now: 220, room: { escalate: ROUND.escalate } },
  get_notification: { now: 120 },
  edit_notification: { now: 150 },
  retract_notification: { now: 85 },
  show_banner: { now: 200 },
  dismiss_banner: { now: 85 },
  list_banners: { now: 95 },
};

/**
 * Per profile, the whole tools/list. flat and per-channel carry the issue's limits (1,600 and
 * 2,000 with every field of the round); nested and oneOf have none, and are reported, not
 * guarded. per-channel's webhook room is send_webhook (218 tokens with two targets) and its
 * name in get_notification's sentence; escalate's is 15 on each of its four send tools.
 */
export const LIST_BUDGETS = {
  flat: { now: 1485, room: { escalate: ROUND.escalate, webhook: ROUND.webhook } },
  'per-channel': { now: 1715, room: { webhook: 220, escalate: 4 * ROUND.escalate } },
};

export const roomOf = (budget) => Object.values(budget.room ?? {}).reduce((n, t) => n + t, 0);
/** The limit with the round's fields in place: `now` plus its room. */
export const limitOf = (budget) => budget.now + roomOf(budget);

/**
 * Issue 40's configuration "with every field of this round in place": ask (NOTIFY_PUBLIC_URL),
 * escalate with one policy, the webhook branch with two targets. The test that guards it is
 * test/compat/token-budget.test.ts; the bench prints it against the issue's limits.
 */
export const FULL_ROUND_ENV = {
  NOTIFY_DATA_DIR: '/nonexistent',
  NOTIFY_PUBLIC_URL: 'https://notify.example.com',
  NOTIFY_ESCALATIONS: 'oncall=slack:#ops@0,sms:+14155550100@5m,email:lead@example.com@15m',
  NOTIFY_SLACK_ALLOW: '#ops',
  NOTIFY_SMS_ALLOW: '+14155550100',
  NOTIFY_EMAIL_ALLOW: 'example.com',
  NOTIFY_WEBHOOKS: 'alerts=standard:https://hooks.example.com/n,ops=discord:https://discord.com/api/webhooks/1/a',
  NOTIFY_WEBHOOK_SECRET_ALERTS: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  NOTIFY_WEBHOOK_ALLOW: '*',
};

/** The issue's limits, with every field of the round in place. */
export const ROUND_LIMITS = { flat: 1600, send_notification: 850, 'per-channel': 2000 };

/** The lists and send_notification under FULL_ROUND_ENV, against ROUND_LIMITS. */
export function fullRoundRows(catalog) {
  const list = (p) => catalog[p].tools.reduce((n, t) => n + toolTokens(t), 0);
  const send = toolTokens(catalog.flat.tools.find((t) => t.name === 'send_notification'));
  const row = (name, tokens, max) => ({
    section: '3. Context budget',
    name: `${name}, every field of the round (ask, escalate with one policy, two webhook targets)`,
    unit: 'tokens',
    better: 'lower',
    value: exact(tokens),
    target: { max, absolute: true, text: `≤ ${max.toLocaleString('en-US')}` },
  });
  return [
    row('whole tools/list, flat', list('flat'), ROUND_LIMITS.flat),
    row('send_notification, flat', send, ROUND_LIMITS.send_notification),
    row('whole tools/list, per-channel', list('per-channel'), ROUND_LIMITS['per-channel']),
  ];
}

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
  const rows = [...budgetRows(buildCatalog(loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' }))), ...fullRoundRows(buildCatalog(loadConfig(FULL_ROUND_ENV)))];
  for (const r of rows) {
    console.log(`${String(r.value.median).padStart(6)}  ${r.name}${r.target ? `  [${r.target.text}: ${verdict(r)}]` : ''}`);
  }
}
