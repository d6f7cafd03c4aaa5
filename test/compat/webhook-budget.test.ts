/**
 * Issue 38's context cost: the webhook branch adds at most 70 tokens to the flat
 * send_notification (bench/token-budget.mjs keeps that room, ROUND.webhook) with one target,
 * each further target its name in the enum, and without a target nothing at all.
 */
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/mcp/catalog.js';
import { loadConfig } from '../../src/config/config.js';
import { LIST_BUDGETS, limitOf, ROUND, TOOL_BUDGETS, toolTokens } from '../../bench/token-budget.mjs';

const BASE = { NOTIFY_DATA_DIR: '/nonexistent' };
const TARGETS = {
  NOTIFY_WEBHOOKS:
    'alerts=standard:https://hooks.example.com/n|ops,ops=discord:https://discord.com/api/webhooks/1/a,team=teams:https://x.logic.azure.com/w,chat=google-chat:https://chat.googleapis.com/v1/spaces/A/messages,phone=ntfy:https://ntfy.sh/t',
  NOTIFY_WEBHOOK_SECRET_ALERTS: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  NOTIFY_WEBHOOK_ALLOW: '*',
};

type Catalog = ReturnType<typeof buildCatalog>;
const sendTokens = (c: Catalog) => toolTokens(c.flat.tools.find((t) => t.name === 'send_notification')!);
const listTokens = (c: Catalog, p: 'flat' | 'per-channel') => c[p].tools.reduce((n, t) => n + toolTokens(t), 0);

describe('webhook context cost', () => {
  const none = buildCatalog(loadConfig(BASE));
  const one = buildCatalog(loadConfig({ ...BASE, ...TARGETS, NOTIFY_WEBHOOKS: 'alerts=standard:https://hooks.example.com/n' }));
  const five = buildCatalog(loadConfig({ ...BASE, ...TARGETS }));

  it('adds nothing without a target', () => {
    expect(JSON.stringify(none.flat.tools)).not.toMatch(/webhook/);
    expect(none['per-channel'].tools.map((t) => t.name)).not.toContain('send_webhook');
  });

  it('adds at most 70 tokens to the flat send_notification with one target, and a name per further target', () => {
    const figures = { none: sendTokens(none), one: sendTokens(one), five: sendTokens(five) };
    console.info('send_notification tokens', figures, 'flat list', listTokens(none, 'flat'), listTokens(five, 'flat'));
    expect(figures.one - figures.none).toBeLessThanOrEqual(ROUND.webhook);
    // Each further target is its name in the enum: about two tokens.
    expect(figures.five - figures.one).toBeLessThanOrEqual(4 * 3);
    expect(figures.five).toBeLessThanOrEqual(limitOf(TOOL_BUDGETS.send_notification));
    expect(listTokens(five, 'flat')).toBeLessThanOrEqual(limitOf(LIST_BUDGETS.flat));
  });

  it("keeps the per-channel list, send_webhook included, within the issue's 2,000", () => {
    const figures = { none: listTokens(none, 'per-channel'), one: listTokens(one, 'per-channel'), five: listTokens(five, 'per-channel') };
    console.info('per-channel list tokens', figures);
    expect(figures.five).toBeLessThanOrEqual(limitOf(LIST_BUDGETS['per-channel']));
  });
});
