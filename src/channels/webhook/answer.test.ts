/** A webhook question's link: `answer_urls` in the standard body, an ntfy view action, a line of text elsewhere. */
import { describe, expect, it } from 'vitest';
import { formatRequest } from './formats.js';

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
});
