/**
 * How body_text is derived from body_html when the caller sends none, so every mail is
 * multipart/alternative: html-to-text, the converter nodemailer users reach for, with the
 * options below. They are plain data because large conversions run in a worker thread
 * (./mime.ts), which receives them by structured clone.
 */
import type { HtmlToTextOptions } from 'html-to-text';

const LINE = { leadingLineBreaks: 1, trailingLineBreaks: 1 };
const HEADINGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];

/**
 * Text deeper than this many elements is replaced by `...`. No real message nests that deep,
 * and the library walks the tree recursively: without a bound, a few thousand nested tags
 * overflow its stack.
 */
export const MAX_DEPTH = 256;

export const HTML_TO_TEXT_OPTIONS: HtmlToTextOptions = {
  // One line per paragraph: the mail client wraps, and hard breaks at 80 columns read badly
  // on a phone.
  wordwrap: false,
  limits: { maxDepth: MAX_DEPTH },
  selectors: [
    // `text (href)`; a link whose text is its address is written once.
    { selector: 'a', options: { linkBrackets: ['(', ')'], hideLinkHrefIfSameAsText: true } },
    // Tracking pixels and inline data: URIs have nothing to say in a text part.
    { selector: 'img', format: 'skip' },
    // Headings keep their case: hostnames and ids in them must not change.
    ...HEADINGS.map((selector) => ({ selector, options: { uppercase: false } })),
    // A row per line, its cells separated by ` | `: a data table stays readable (`db-1 | 91%`),
    // and unlike the column layout of `dataTable` a layout table nested in cells does not
    // turn into padded gibberish.
    { selector: 'table', options: LINE },
    { selector: 'tr', format: 'block', options: LINE },
    ...['th', 'td'].flatMap((cell) => [
      { selector: cell, format: 'inlineSurround', options: { prefix: ' | ', suffix: '' } },
      { selector: `${cell}:first-child`, format: 'inline' },
    ]),
  ],
};

let compiled: ((html: string) => string) | undefined;

/**
 * The converter, loaded on first use: html-to-text and its parser are a fair share of a
 * cold start that a server sending no email never needs. Converts in
 * the calling thread; its cost grows with the square of the nesting depth (htmlparser2 keeps
 * its open-element stack with Array#unshift), so large bodies go to a worker (./mime.ts).
 */
export async function loadHtmlToText(): Promise<(html: string) => string> {
  if (compiled) return compiled;
  const { compile } = await import('html-to-text');
  return (compiled ??= compile(HTML_TO_TEXT_OPTIONS));
}

/** Paragraphs of plain text with inline emphasis and nothing else: the common notification's HTML. */
const SIMPLE_HTML = /^(?:<p>(?:[\w .,:;!?'"()%#=@$*/+-]|<\/?(?:b|strong|i|em|u|span)>)*<\/p>)+$/;
const TAG = /<[^>]*>/g;
const SPACES = / {2,}/g;

/**
 * The text part of simple HTML (SIMPLE_HTML), as html-to-text derives it with the options
 * above: tags dropped, spaces collapsed, paragraphs apart by a blank line (compared on
 * generated HTML in html-to-text.test.ts). Undefined for anything else, which the converter
 * takes. The converter's parse and walk would be most of a small email's own build time.
 */
export function simpleHtmlToText(html: string): string | undefined {
  if (!SIMPLE_HTML.test(html)) return undefined;
  let text = '';
  for (let p of html.slice('<p>'.length, -'</p>'.length).split('</p><p>')) {
    if (p.includes('<')) p = p.replace(TAG, '');
    if (p.includes('  ')) p = p.replace(SPACES, ' ');
    p = p.trim();
    // An empty paragraph still adds line breaks in html-to-text: the converter says how many.
    if (p === '') return undefined;
    text = text === '' ? p : `${text}\n\n${p}`;
  }
  return text;
}
