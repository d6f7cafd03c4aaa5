import { describe, expect, it } from 'vitest';
import { escapeHtml, html, trusted } from './html.js';

describe('html', () => {
  it('escapes every interpolated value, and only Html passes as markup', () => {
    const evil = `<script>alert(1)</script>"' onload=x \``;
    const page = html`<p title="${evil}">${evil}</p>${html`<b>${'&'}</b>`}${[1, '<i>']}${null}${false}`;
    expect(page.text).toBe(
      '<p title="&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39; onload=x &#96;">&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39; onload=x &#96;</p><b>&amp;</b>1&lt;i&gt;',
    );
    // A plain object that looks like Html is text, not markup.
    expect(html`${{ text: '<b>' }}`.text).toBe('[object Object]');
    expect(html`${trusted('<hr>')}`.text).toBe('<hr>');
    expect(escapeHtml('a&b')).toBe('a&amp;b');
  });
});
