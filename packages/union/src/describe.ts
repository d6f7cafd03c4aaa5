/**
 * Tool descriptions generated from the union: the intro, one sentence per variant (what it
 * takes, what it accepts, its limits), then the rules common to all variants.
 */
import type { UnionDef, Variant } from './define.js';
import type { JsonSchema } from './json-schema.js';
import { exampleOf } from './limits.js';
import { canonicalJson } from './schema-hash.js';

export function listWords(words: string[], conjunction = 'and'): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} ${conjunction} ${words[words.length - 1]}`;
}

/**
 * Where the description is the flat shape's: `words` (each field's description comes first,
 * `to (E.164 number, e.g. +14155550123)`, since that schema does not carry it), and `def`, so
 * that a limit the flat schema already states for this variant goes unsaid.
 */
export interface DescriptionContext {
  words: boolean;
  def?: UnionDef;
}

/**
 * Fields named with their limits: `title (1-255 characters) and body`. A variant whose
 * limits are one hand-written phrase gets it once, after the list. For a tool description
 * (`inDescription`), limits are said as a description states them; error advice states the
 * limits whole.
 */
export function fieldList(variant: Variant, fields: string[], conjunction = 'and', inDescription?: DescriptionContext): string {
  const whole = typeof variant.meta.limits === 'string' ? variant.meta.limits : undefined;
  const named = fields.map((f) => {
    const limits = whole ? undefined : inDescription ? statedLimits(variant, f, inDescription.def) : variant.limits[f];
    const said = [inDescription?.words ? describedAs(variant, f) : undefined, limits].filter(Boolean);
    return said.length ? `${f} (${said.join(said[1]?.startsWith('e.g.') ? ', ' : '; ')})` : f;
  });
  return listWords(named, conjunction);
}

function describedAs(variant: Variant, field: string): string | undefined {
  const node = (variant.json.properties as Record<string, { description?: unknown }> | undefined)?.[field];
  return typeof node?.description === 'string' ? node.description : undefined;
}

/**
 * A field's limits as a description states them. A described field's pattern is said by its
 * example: the words say what it checks, and every shape's schema carries the regex itself.
 * A bare `non-empty` goes unsaid: every text field is, and the schema's minLength says it.
 * With the flat `def`, a generated limit of a field that has one rule in every variant taking
 * it is the flat schema's own keywords, so only its example is said (that schema has none);
 * a hand-written limit, or a field merged from different rules, is said whole.
 */
function statedLimits(variant: Variant, field: string, flat?: UnionDef): string | undefined {
  if (flat && flatSchemaStates(flat, variant, field)) {
    const example = exampleOf(propertyOf(variant, field) ?? {});
    return example === undefined || !variant.limits[field] ? undefined : `e.g. ${example}`;
  }
  const limits = variant.limits[field] === 'non-empty' ? undefined : variant.limits[field];
  const pattern = (variant.json.properties as Record<string, { pattern?: unknown }> | undefined)?.[field]?.pattern;
  if (!limits || typeof pattern !== 'string' || !describedAs(variant, field)) return limits;
  return limits.replace(`matching ${pattern}, `, '').replace(`matching ${pattern}`, '') || undefined;
}

const propertyOf = (variant: Variant, field: string) => (variant.json.properties as Record<string, JsonSchema> | undefined)?.[field];

/** A field's rule without its words, as the flat schema merges it. */
function ruleOf(variant: Variant, field: string): string {
  const { description: _d, examples: _e, ...rule } = propertyOf(variant, field) ?? {};
  return canonicalJson(rule);
}

/** Whether the flat schema states this variant's generated limits of `field` as its own keywords. */
function flatSchemaStates(def: UnionDef, variant: Variant, field: string): boolean {
  const given = variant.meta.limits;
  if (typeof given === 'string' || (given !== undefined && Object.hasOwn(given, field))) return false;
  const rule = ruleOf(variant, field);
  return def.variants.every((v) => !v.fields.includes(field) || ruleOf(v, field) === rule);
}

/** The hand-written phrase that replaces a variant's generated limits, if it has one: ` (r > 0)`. */
export function wholeLimits(variant: Variant): string {
  return typeof variant.meta.limits === 'string' ? ` (${variant.meta.limits})` : '';
}

/** "takes to (…), subject (1-255 characters) and body_html; optional body_text or reply_to" */
export function fieldsSentence(def: UnionDef, variant: Variant, words = false): string {
  const shared = sharedFields(def);
  const own = (f: string) => !shared.includes(f);
  const required = variant.required.filter(own);
  const optional = variant.fields.filter((f) => own(f) && !variant.required.includes(f));
  const parts: string[] = [];
  const said = { words, ...(words ? { def } : {}) };
  if (required.length) parts.push(`takes ${fieldList(variant, required, 'and', said)}`);
  if (optional.length) parts.push(`${required.length ? '' : 'takes '}optional ${fieldList(variant, optional, 'or', said)}`);
  return (parts.length ? parts.join('; ') : 'takes nothing more') + wholeLimits(variant);
}

/**
 * Fields every variant takes alike (required or not, the same limits): said once, after the
 * variants. A shared name with different rules is said in each variant's sentence instead.
 */
function sharedFields(def: UnionDef): string[] {
  const rule = (v: Variant, f: string) => `${v.required.includes(f)} ${wholeLimits(v) ? '' : (v.limits[f] ?? '')}`;
  return def.commonFields.filter((f) => new Set(def.variants.map((v) => rule(v, f))).size === 1);
}

export function variantSentence(def: UnionDef, variant: Variant, words = false): string {
  return `${variant.value}: ${fieldsSentence(def, variant, words)}. ${variant.meta.description}`;
}

/**
 * Description of the single polymorphic tool. `words`: each field's description is said here
 * (the flat shape, whose merged schema leaves them out), not only in the schema.
 */
export function describeUnion(def: UnionDef, words = false): string {
  const { intro, outro } = def.options;
  // An empty intro leaves the head to the discriminator: the tool's name may say what it does.
  const head = [
    intro,
    `Set ${def.discriminator} to ${listWords(
      def.variants.map((v) => v.value),
      'or',
    )}.`,
  ]
    .filter(Boolean)
    .join(' ');
  const body = def.variants.map((v) => variantSentence(def, v, words)).join(' ');
  return [head, body, commonSentence(def, words), outro].filter(Boolean).join(' ');
}

/**
 * "Every <variant noun> takes optional key (1-128 characters)." (the shared fields, left
 * out of the variant sentences).
 */
function commonSentence(def: UnionDef, words: boolean): string {
  const shared = sharedFields(def);
  if (!shared.length) return '';
  const first = def.variants[0]!;
  const optional = shared.filter((f) => !first.required.includes(f));
  const required = shared.filter((f) => first.required.includes(f));
  const said = { words, ...(words ? { def } : {}) };
  const parts = [
    required.length ? fieldList(first, required, 'and', said) : '',
    optional.length ? `optional ${fieldList(first, optional, 'and', said)}` : '',
  ];
  return `Every ${def.options.variantNoun} takes ${parts.filter(Boolean).join(' and ')}.`;
}

/**
 * Description of one variant's own tool (the `per-<variantNoun>` profile). Its input schema is
 * the variant's own, which states every generated limit (and, folded, every example), so only
 * the hand-written limits, which no schema keyword holds, are said here.
 */
export function describeVariant(def: UnionDef, variant: Variant): string {
  return [variant.meta.description, handWrittenLimits(variant), def.options.outro].filter(Boolean).join(' ');
}

/** `attachments: PDF or image; 2 MiB in all.`, or a whole-variant phrase as it is given. */
function handWrittenLimits(variant: Variant): string {
  const given = variant.meta.limits;
  if (typeof given === 'string') return `${given[0]!.toUpperCase()}${given.slice(1)}.`;
  const said = variant.fields.filter((f) => given !== undefined && Object.hasOwn(given, f)).map((f) => `${f}: ${given![f]}`);
  return said.length ? `${said.join('; ')}.` : '';
}
