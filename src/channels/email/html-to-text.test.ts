import { describe, expect, it } from 'vitest';
import { htmlToText } from './html-to-text.js';

describe('htmlToText', () => {
  it('keeps the words, breaks blocks into lines, keeps link targets', () => {
    expect(htmlToText('<h1>Deploy</h1><p>Version <b>1.2</b> is live.</p><p>See <a href="https://ci.example/42">the run</a>.</p>')).toBe(
      'Deploy\n\nVersion 1.2 is live.\n\nSee the run (https://ci.example/42).',
    );
  });

  it('lists items, decodes entities, drops scripts and styles', () => {
    expect(htmlToText('<style>p{}</style><ul><li>A &amp; B</li><li>&lt;ok&gt; &#8364;5 &#x263A;</li></ul><script>x()</script>')).toBe('- A & B\n- <ok> €5 ☺');
  });

  it('writes a bare link once', () => {
    expect(htmlToText('<a href="https://x.example">https://x.example</a>')).toBe('https://x.example');
  });
});
