/** The email's answer link, the one place it is rendered: escaped in HTML, as is in text, and a text part only when there was one. */
import { describe, expect, it } from 'vitest';
import { withEmailAnswer } from './answer-links.js';

const link = { choices: ['Yes & go', '"No"'], url: 'https://notify.example.com/a&b"c/answer/tok' };

describe('email answer link', () => {
  it('escapes the link and the choices in the HTML part, and keeps them as they are in the text part', () => {
    const { html, text } = withEmailAnswer('<p>Deploy?</p>', 'Deploy?', link);
    expect(html).toBe(
      '<p>Deploy?</p>\n<p>Answer (Yes &amp; go / &quot;No&quot;): <a href="https://notify.example.com/a&amp;b&quot;c/answer/tok">https://notify.example.com/a&amp;b&quot;c/answer/tok</a></p>',
    );
    expect(text).toBe(`Deploy?\n\nAnswer (Yes & go / "No"): ${link.url}\n`);
  });

  it('leaves the text part to be derived from the HTML (link included) when the call had none', () => {
    expect(withEmailAnswer('<p>x</p>', undefined, link).text).toBeUndefined();
  });
});
