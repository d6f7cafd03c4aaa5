/**
 * Row 3: context cost. o200k tokens (gpt-tokenizer, o200k_base) of what a model sees of a
 * tool: `name`, `description` and the compact JSON of `inputSchema`, one per line; and of
 * each profile's whole tools/list as a client receives it (output schemas included). Exact
 * and deterministic, so there is no spread. The two published single-channel tools are
 * cited constants: this machine has no network, so their servers cannot be fetched and
 * counted here. The budgets (issue 40), per tool and per list, are ./token-budget.mjs's rows.
 */
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { buildCatalog } from '../dist/mcp/catalog.js';
import { loadConfig } from '../dist/config/config.js';
import { HAND_WRITTEN_TOOL } from './hand-written-tool.mjs';
import { exact } from './lib/stats.mjs';
import { toolTokens } from './token-budget.mjs';

export const CITED = {
  resend: { name: '`resend-mcp` 2.22.0 `send-email` (cited, not fetched: no network)', tokens: 1240 },
  twilio: { name: '`@twilio-alpha/mcp` 0.7.0 `TwilioApiV2010--CreateMessage` (cited, not fetched: no network)', tokens: 1847 },
};

export function benchTokens() {
  const catalog = buildCatalog(loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' }));
  const hand = toolTokens(HAND_WRITTEN_TOOL);
  const cited = CITED.resend.tokens + CITED.twilio.tokens;
  const send = (profile) => catalog[profile].tools.filter((t) => t.name.startsWith('send_'));
  const sum = (tools) => tools.reduce((n, t) => n + toolTokens(t), 0);

  const rows = [];
  const row = (name, tokens, extra = {}) =>
    rows.push({
      section: '3. Context cost',
      name,
      unit: 'tokens',
      better: 'lower',
      value: exact(tokens),
      baselineName: 'hand-written flat tool, no rules stated (bench/hand-written-tool.mjs)',
      baseline: exact(hand),
      ratio: { median: tokens / hand },
      ...extra,
    });
  const flat = sum(send('flat'));
  row('send_notification, flat (default)', flat, {
    note: `${((flat / cited) * 100).toFixed(1)}% of resend + twilio (${cited})`,
  });
  row('send_notification, nested (OpenAI strict)', sum(send('nested')));
  row('send_notification, oneOf (SEP-2106)', sum(send('oneOf')));
  row('send_email + send_sms + send_slack, per-channel (total)', sum(send('per-channel')), {
    note: send('per-channel').map((t) => `${t.name} ${toolTokens(t)}`).join(', '),
  });
  const noBaseline = { baselineName: undefined, baseline: undefined, ratio: undefined };
  // What a client receives: every field of every tool, output schemas and annotations included.
  for (const profile of ['flat', 'nested', 'oneOf', 'per-channel']) {
    const { tools } = catalog[profile];
    row(`whole tools/list as sent, ${profile}: JSON of every tool, input and output schemas`, encode(JSON.stringify({ tools })).length, {
      ...noBaseline,
      note: tools.map((t) => `${t.name} ${encode(JSON.stringify(t)).length}`).join(', '),
    });
  }
  for (const c of Object.values(CITED)) row(c.name, c.tokens, { cited: true });
  return rows;
}

// `node --import ./test/register.mjs bench/tokens.mjs` (after `npm run build`): every token row.
if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = benchTokens();
  for (const r of rows) console.log(`${r.value.median}\t${r.name}${r.note ? `  (${r.note})` : ''}`);
}
