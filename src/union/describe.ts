/**
 * Tool descriptions generated from the union: the intro, one sentence per variant (what it
 * takes, what it accepts, its limits), then the rules common to all variants.
 */
import type { UnionDef, Variant } from './define.js';

export function listWords(words: string[], conjunction = 'and'): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} ${conjunction} ${words[words.length - 1]}`;
}

/**
 * Fields named with their limits: `title (1-255 characters) and body`. A variant whose
 * limits are one hand-written phrase gets it once, after the list.
 */
export function fieldList(variant: Variant, fields: string[], conjunction = 'and'): string {
  const whole = typeof variant.meta.limits === 'string' ? variant.meta.limits : undefined;
  const named = fields.map((f) => (!whole && variant.limits[f] ? `${f} (${variant.limits[f]})` : f));
  return listWords(named, conjunction);
}

/** The hand-written phrase that replaces a variant's generated limits, if it has one: ` (r > 0)`. */
export function wholeLimits(variant: Variant): string {
  return typeof variant.meta.limits === 'string' ? ` (${variant.meta.limits})` : '';
}

/** "takes to (…), subject (1-255 characters) and body_html; optional body_text or reply_to" */
export function fieldsSentence(def: UnionDef, variant: Variant): string {
  const shared = sharedFields(def);
  const own = (f: string) => !shared.includes(f);
  const required = variant.required.filter(own);
  const optional = variant.fields.filter((f) => own(f) && !variant.required.includes(f));
  const parts: string[] = [];
  if (required.length) parts.push(`takes ${fieldList(variant, required)}`);
  if (optional.length) parts.push(`${required.length ? '' : 'takes '}optional ${fieldList(variant, optional, 'or')}`);
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

export function variantSentence(def: UnionDef, variant: Variant): string {
  return `${variant.value}: ${fieldsSentence(def, variant)}. ${variant.meta.description}`;
}

/** Description of the single polymorphic tool. */
export function describeUnion(def: UnionDef): string {
  const { intro, outro } = def.options;
  const head = `${intro} Set ${def.discriminator} to ${listWords(def.variants.map((v) => v.value), 'or')}.`;
  const body = def.variants.map((v) => variantSentence(def, v)).join(' ');
  return [head, body, commonSentence(def), outro].filter(Boolean).join(' ');
}

/**
 * "Every <variant noun> also takes optional key (1-128 characters)." (the shared fields, left
 * out of the variant sentences).
 */
function commonSentence(def: UnionDef): string {
  const shared = sharedFields(def);
  if (!shared.length) return '';
  const first = def.variants[0]!;
  const optional = shared.filter((f) => !first.required.includes(f));
  const required = shared.filter((f) => first.required.includes(f));
  const named = (fields: string[]) => listWords(fields.map((f) => (!wholeLimits(first) && first.limits[f] ? `${f} (${first.limits[f]})` : f)));
  const parts = [required.length ? named(required) : '', optional.length ? `optional ${named(optional)}` : ''];
  return `Every ${def.options.variantNoun} also takes ${parts.filter(Boolean).join(' and ')}.`;
}

/** Description of one variant's own tool (the `per-<variantNoun>` profile). */
export function describeVariant(def: UnionDef, variant: Variant): string {
  const takes = fieldsSentence(def, variant);
  return [variant.meta.description, `${takes[0]!.toUpperCase()}${takes.slice(1)}.`, def.options.outro]
    .filter(Boolean)
    .join(' ');
}
