/**
 * Limits in words, generated from a field's JSON Schema, which zod writes from the field's
 * checks: lengths, item counts, numeric ranges, patterns with an example (`examples`, set
 * with `.meta({ examples })`). Descriptions and error advice quote these phrases, so a
 * `.max(160)` is stated wherever the field is, with nothing written by hand.
 */
import type { JsonSchema } from './json-schema.js';
import { canonicalJson } from './schema-hash.js';

const isSchema = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** zod's bounds of `z.int()` say "an integer", not a limit. */
const SAFE = Number.MAX_SAFE_INTEGER;

/** 40000 → "40,000": grouped by hand so the text is the same under every locale. */
export function formatNumber(n: number): string {
  if (!Number.isInteger(n) || Math.abs(n) < 1000) return `${n}`;
  return `${n < 0 ? '-' : ''}${`${Math.abs(n)}`.replace(/\B(?=(\d{3})+$)/g, ',')}`;
}

/** `1-255 characters`, `at most 254 characters`, `non-empty`; undefined without bounds. */
export function lengthPhrase(min: unknown, max: unknown, unit = 'characters'): string | undefined {
  const lo = typeof min === 'number' && min > 0 ? min : undefined;
  if (typeof max === 'number') {
    if (lo === undefined) return `at most ${formatNumber(max)} ${unit}`;
    return lo === max ? `exactly ${formatNumber(max)} ${unit}` : `${formatNumber(lo)}-${formatNumber(max)} ${unit}`;
  }
  if (lo === undefined) return undefined;
  return lo === 1 ? 'non-empty' : `at least ${formatNumber(lo)} ${unit}`;
}

function rangePhrase(node: JsonSchema): string | undefined {
  const num = (k: string) => (typeof node[k] === 'number' && Math.abs(node[k] as number) < SAFE ? (node[k] as number) : undefined);
  const [min, max, xmin, xmax] = [num('minimum'), num('maximum'), num('exclusiveMinimum'), num('exclusiveMaximum')];
  const parts: string[] = [];
  if (min !== undefined && max !== undefined) parts.push(`from ${formatNumber(min)} to ${formatNumber(max)}`);
  else {
    if (xmin !== undefined) parts.push(`greater than ${formatNumber(xmin)}`);
    else if (min !== undefined) parts.push(`at least ${formatNumber(min)}`);
    if (xmax !== undefined) parts.push(`less than ${formatNumber(xmax)}`);
    else if (max !== undefined) parts.push(`at most ${formatNumber(max)}`);
  }
  if (typeof node.multipleOf === 'number') parts.push(`a multiple of ${formatNumber(node.multipleOf)}`);
  if (!parts.length) return undefined;
  return `${node.type === 'integer' ? 'a whole number ' : ''}${parts.join(' and ')}`;
}

/** `matching ^P[A-Z0-9]{6}$, e.g. PABC123`. */
export function patternPhrase(node: JsonSchema): string | undefined {
  if (typeof node.pattern !== 'string') return undefined;
  const example = exampleOf(node);
  return `matching ${node.pattern}${example === undefined ? '' : `, e.g. ${example}`}`;
}

/** The schema's first example, as text. */
export function exampleOf(node: JsonSchema): string | undefined {
  const first: unknown = Array.isArray(node.examples) ? node.examples[0] : undefined;
  if (first === undefined) return undefined;
  return typeof first === 'string' ? first : JSON.stringify(first);
}

const NOUN: Record<string, string> = {
  string: 'a string',
  array: 'a list',
  number: 'a number',
  integer: 'a whole number',
  object: 'an object',
  boolean: 'true or false',
};

/** The limits of one node, not counting its alternatives. */
function ownPhrase(node: JsonSchema): string | undefined {
  const parts: string[] = [];
  if (node.type === 'array' || 'items' in node) {
    const count = lengthPhrase(node.minItems, node.maxItems, 'items');
    if (count) parts.push(count);
    if (node.uniqueItems === true) parts.push('no item twice');
    const each = isSchema(node.items) ? limitsOf(node.items) : undefined;
    if (each) parts.push(`each ${each}`);
    return parts.length ? parts.join(', ') : undefined;
  }
  const length = lengthPhrase(node.minLength, node.maxLength);
  if (length) parts.push(length);
  const pattern = patternPhrase(node);
  if (pattern) parts.push(pattern);
  const range = rangePhrase(node);
  if (range) parts.push(range);
  if (!pattern) {
    const example = exampleOf(node);
    if (example !== undefined && parts.length) parts.push(`e.g. ${example}`);
  }
  return parts.length ? parts.join(', ') : undefined;
}

/**
 * A field's limits in one phrase, or undefined when its schema holds none (a bare string,
 * an enum, a format). Alternatives are each named by kind: `a string, or a list of 1-50
 * items`. A `null` alternative (an optional made nullable) is not one.
 */
export function limitsOf(node: JsonSchema): string | undefined {
  const alternatives = [node.anyOf, node.oneOf]
    .flatMap((list) => (Array.isArray(list) ? list.filter(isSchema) : []))
    .filter((a) => a.type !== 'null');
  if (!alternatives.length) return ownPhrase(node);
  if (alternatives.length === 1) return limitsOf(alternatives[0]!);
  const listed = oneOrList(alternatives);
  if (listed !== undefined) return listed;
  const phrases = alternatives.map((a) => limitsOf(a));
  if (phrases.every((p) => p === undefined)) return undefined;
  return phrases
    .map((p, i) => {
      const noun = NOUN[alternatives[i]!.type as string] ?? 'a value';
      if (p === undefined) return noun;
      if (p.startsWith('a whole')) return p;
      if (p === 'non-empty') return `a non-empty ${noun.slice(2)}`;
      // A number's range follows its noun; a length or a count is "of" it: `a string of at most 254 characters`.
      const numeric = alternatives[i]!.type === 'number' || alternatives[i]!.type === 'integer';
      if (numeric || /^(matching|each)/.test(p)) return `${noun}${p.startsWith('each') ? ',' : ''} ${p}`;
      return `${noun} of ${p}`;
    })
    .join(', or ');
}

/**
 * A value or a list of such values (`[S, { type: array, items: S }]`), said once:
 * `a string or a list of 1-50, each at most 254 characters`; undefined for other alternatives.
 */
function oneOrList(alternatives: JsonSchema[]): string | undefined {
  if (alternatives.length !== 2) return undefined;
  const [one, list] = alternatives[0]!.type === 'array' ? [alternatives[1]!, alternatives[0]!] : [alternatives[0]!, alternatives[1]!];
  if (list.type !== 'array' || !isSchema(list.items) || canonicalJson(list.items) !== canonicalJson(one)) return undefined;
  const count = (lengthPhrase(list.minItems, list.maxItems, '') ?? '').trim();
  const each = limitsOf(one);
  return `${NOUN[one.type as string] ?? 'one'} or a list${count && count !== 'non-empty' ? ` of ${count}` : ''}${each ? `, each ${each}` : ''}`;
}

/** Each property's limits, for an object schema that is not a union's variant. */
const objectLimits = new WeakMap<JsonSchema, Record<string, string>>();
export function limitsOfObject(json: JsonSchema): Readonly<Record<string, string>> {
  let out = objectLimits.get(json);
  if (!out) {
    out = {};
    for (const [field, node] of Object.entries((json.properties ?? {}) as Record<string, JsonSchema>)) {
      const phrase = limitsOf(node);
      if (phrase) out[field] = phrase;
    }
    objectLimits.set(json, out);
  }
  return out;
}

/**
 * A field's description with its limits added where it does not say them already:
 * `E.164 number (matching ^\+[1-9]\d{1,14}$)` when the description holds the example.
 */
export function withLimits(description: string, limits: string): string {
  if (description.includes(limits)) return description;
  const example = /, e\.g\. (.+)$/.exec(limits);
  const said = example && description.includes(example[1]!) ? limits.slice(0, example.index) : limits;
  return `${description} (${said})`;
}
