/** A webhook question's link: `answer_urls` in the standard body, an ntfy view action, a line of text elsewhere. */
import { describe, expect, it } from 'vitest';
import { formatRequest as request, shownMessage, type WebhookMessage } from './formats.js';
import type { WebhookFormat } from './targets.js';

/** The request as buildPayload makes it: the message as the format shows it. */
const formatRequest = (format: WebhookFormat, m: WebhookMessage, id: string) => request(format, shownMessage(format, m), id);

const answer = { choices: ['Yes', 'No'], url: 'https://notify.example.com/answer/tok' };
const m = { text: 'Deploy?', answer };

describe('webhook answer link', () => {
  it('standard: choices and answer_urls in the JSON body, the text untouched', () => {
    const body = JSON.parse(formatRequest('standard', m, 'ntf_1').body);
    expect(body).toMatchObject({ text: 'Deploy?', choices: ['Yes', 'No'], answer_urls: [answer.url] });
  });

  it('ntfy: a view action and the link in the text; discord, google-chat and teams: the link in the text', () => {
    const ntfy = formatRequest('ntfy', m, 'ntf_1');
    expect(ntfy.headers.Actions).toBe(`view, Answer, ${answer.url}`);
    expect(ntfy.body).toBe(`Deploy?\n\nAnswer (Yes / No): ${answer.url}`);
    for (const format of ['discord', 'google-chat', 'teams'] as const) expect(formatRequest(format, m, 'ntf_1').body).toContain(answer.url);
  });

  it('without a question, nothing is added', () => {
    expect(JSON.parse(formatRequest('standard', { text: 'x' }, 'ntf_1').body).answer_urls).toBeUndefined();
    expect(formatRequest('ntfy', { text: 'x' }, 'ntf_1').headers.Actions).toBeUndefined();
  });

  it("with ask, a text the link would push past a target's limit is refused at the call, naming the room", async () => {
    const { loadConfig } = await import('../../config/config.js');
    const { notificationDef } = await import('../send-union.js');
    const { validateUnionCall } = await import('@notify-mcp/union');
    const def = notificationDef(
      loadConfig({
        NOTIFY_DATA_DIR: '/x',
        NOTIFY_PUBLIC_URL: 'https://notify.example.com',
        NOTIFY_WEBHOOKS: 'chat=discord:https://discord.com/api/webhooks/1/a',
        NOTIFY_WEBHOOK_ALLOW: '*',
      }).channels,
    );
    const call = (text: string, ask?: object) =>
      validateUnionCall(def, {}, { via: 'webhook', target: 'chat', text, ...(ask ? { ask } : {}) });
    expect(call('x'.repeat(2000)).ok).toBe(true);
    const refused = call('x'.repeat(2000), {});
    expect(refused.ok).toBe(false);
    const issue = refused.ok ? undefined : refused.issues[0];
    expect(issue).toMatchObject({ code: 'TOO_LONG', path: '/text' });
    expect(issue!.message).toMatch(/with ask's answer link \(\d+ characters\), target chat: text takes at most 2000 characters/);
    expect(call('x'.repeat(1800), {}).ok).toBe(true);
  });
});
