/**
 * HTML built by a tagged template that escapes every interpolated value: caller text (a
 * subject, a banner, a recipient) can only ever be text. Markup passes only as `Html`,
 * which only this module and `html` make.
 */

const HTML_BRAND = Symbol('html');

/** Markup that is already safe: made by `html` (whose values were escaped) or `trusted`. */
export interface Html {
  readonly [HTML_BRAND]: true;
  readonly text: string;
}

const make = (text: string): Html => ({ [HTML_BRAND]: true, text });

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Text as HTML text or a quoted attribute value. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

const isHtml = (v: unknown): v is Html => typeof v === 'object' && v !== null && HTML_BRAND in v;

/** A value: Html as it is, a list joined, null/undefined/false as nothing, anything else escaped text. */
function part(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (isHtml(value)) return value.text;
  if (Array.isArray(value)) return value.map(part).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += part(values[i]) + strings[i + 1]!;
  return make(out);
}

/** Markup written by this server itself (a constant), never caller text. */
export function trusted(text: string): Html {
  return make(text);
}
