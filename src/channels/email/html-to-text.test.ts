import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertProperty } from '../../../test/helpers/property.js';
import { MAX_DEPTH, loadHtmlToText, simpleHtmlToText } from './html-to-text.js';

let htmlToText: (html: string) => string;
beforeAll(async () => {
  htmlToText = await loadHtmlToText();
});

/** The non-empty lines, trimmed: what a reader sees, whatever the blank lines between. */
const lines = (html: string) =>
  htmlToText(html)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

describe('htmlToText (html-to-text with our options)', () => {
  it('keeps the words, puts blocks on their own lines, keeps link targets', () => {
    expect(lines('<h1>Deploy</h1><p>Version <b>1.2</b> is live.</p><p>See <a href="https://ci.example/42">the run</a>.</p>')).toEqual([
      'Deploy',
      'Version 1.2 is live.',
      'See the run (https://ci.example/42).',
    ]);
  });

  it('writes a bare link once', () => {
    expect(htmlToText('<a href="https://x.example">https://x.example</a>')).toBe('https://x.example');
  });

  it('lists one item a line, in order, with a marker; decodes entities; drops scripts and styles', () => {
    const out = lines(
      '<style>p{color:red}</style><ul><li>A &amp; B</li><li>&lt;ok&gt; &#8364;5 &#x263A; &eacute;</li></ul><ol><li>one</li><li>two</li></ol><script>alert(1)</script>',
    );
    expect(out).toHaveLength(4);
    expect(out[0]).toMatch(/^\W+ A & B$/);
    expect(out[1]).toMatch(/^\W+ <ok> €5 ☺ é$/);
    expect(out[2]).toMatch(/^1\.\s+one$/);
    expect(out[3]).toMatch(/^2\.\s+two$/);
    expect(htmlToText('<style>p{color:red}</style><script>alert(1)</script>')).toBe('');
  });

  it('keeps the case of headings (hostnames and ids in them must not change)', () => {
    expect(lines('<h2>db-1 on eu-West</h2>')).toEqual(['db-1 on eu-West']);
  });

  it('keeps a table readable: a row per line, its cells in order and separated', () => {
    expect(lines('<p>before</p><table><tr><th>Host</th><th>Disk</th></tr><tr><td>db-1</td><td>91%</td></tr></table><p>after</p>')).toEqual([
      'before',
      'Host | Disk',
      'db-1 | 91%',
      'after',
    ]);
    // thead and tbody, an empty cell, a third column: still one row per line.
    expect(
      lines('<table><thead><tr><th>a</th><th>b</th><th>c</th></tr></thead><tbody><tr><td>1</td><td></td><td>3</td></tr></tbody></table>'),
    ).toEqual(['a | b | c', '1 |  | 3']);
  });

  it('a layout table keeps its words, in order', () => {
    expect(
      lines('<table><tr><td><table><tr><td>Logo</td></tr></table></td><td><p>Hello <b>there</b></p><p>second</p></td></tr></table>').join(
        ' ',
      ),
    ).toMatch(/^Logo .*Hello there second$/);
  });

  it('leaves images and the head out', () => {
    const text = htmlToText(
      '<html><head><title>Internal title</title></head><body><p>Logo <img src="data:image/png;base64,iVBORw0KGgo=" alt="logo"> here</p></body></html>',
    );
    expect(text).toBe('Logo here');
  });

  it('does not wrap long lines (the mail client does)', () => {
    const sentence = 'word '.repeat(40).trim();
    expect(htmlToText(`<p>${sentence}</p>`)).toBe(sentence);
  });

  it('survives nesting far deeper than its recursion could follow, keeping the shallow text', () => {
    const deep = `<p>top</p>${'<div>'.repeat(20_000)}buried`;
    const text = htmlToText(deep);
    expect(text.startsWith('top')).toBe(true);
    expect(text).not.toContain('buried');
    expect(lines(`${'<div>'.repeat(MAX_DEPTH - 2)}reachable`)).toEqual(['reachable']);
  });
});

describe('simpleHtmlToText', () => {
  it('derives what html-to-text derives from simple HTML, and leaves anything else to it (generated HTML)', async () => {
    // Words, spaces, punctuation and inline tags (the simple shape), and tokens outside it mixed in.
    const simpleTokens = [
      'a',
      'Zz9',
      ' ',
      '  ',
      '.',
      "'",
      '"',
      '(',
      ')',
      '%',
      '#',
      '=',
      '@',
      '$',
      '*',
      '/',
      '+',
      '-',
      '_',
      ':',
      '!',
      '?',
      '<b>',
      '</b>',
      '<strong>',
      '</strong>',
      '<i>',
      '</i>',
      '<em>',
      '</em>',
      '<u>',
      '</u>',
      '<span>',
      '</span>',
    ];
    const oddTokens = ['&amp;', '\n', '\t', '<br>', '<B>', '<a href="x">', '</a>', 'é', '<', '>', '<code>', '<p>', '</p>'];
    const token = fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...simpleTokens) }, fc.constantFrom(...oddTokens));
    const paragraph = fc.array(token, { maxLength: 12 }).map((t) => `<p>${t.join('')}</p>`);
    const html = fc
      .tuple(fc.array(paragraph, { minLength: 1, maxLength: 4 }), fc.constantFrom('', '', '', ' ', '\n'))
      .map(([ps, sep]) => ps.join(sep));
    let simple = 0;
    await assertProperty(
      'simpleHtmlToText matches html-to-text',
      fc.property(html, (h) => {
        const fast = simpleHtmlToText(h);
        if (fast === undefined) return;
        simple += 1;
        expect(fast, h).toBe(htmlToText(h));
      }),
      { numRuns: 4000 },
    );
    // The property says something only if the fast path was taken often enough.
    expect(simple).toBeGreaterThan(800);
    expect(simpleHtmlToText('<p>Deployed <b>v1.2</b></p>')).toBe('Deployed v1.2');
    expect(simpleHtmlToText('<p>a &amp; b</p>')).toBeUndefined();
    expect(simpleHtmlToText('<p>a</p><p> </p>')).toBeUndefined();
  });
});
