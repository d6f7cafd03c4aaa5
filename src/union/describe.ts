/**
 * Tool descriptions generated from the union: the intro, one sentence per variant (what it
 * takes, what it accepts, its limits), then the rules common to all variants.
 */
import type { UnionDef, Variant } from './define.js';

export function listWords(words: string[], conjunction = 'and'): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} ${conjunction} ${words[words.length - 1]}`;
}

/** "to, subject and body_html; optional body_text, reply_to." */
export function fieldsSentence(def: UnionDef, variant: Variant): string {
  const own = (f: string) => !def.commonFields.includes(f);
  const required = variant.required.filter(own);
  const optional = variant.fields.filter((f) => own(f) && !variant.required.includes(f));
  const parts = [`takes ${listWords(required)}`];
  if (optional.length) parts.push(`optional ${listWords(optional, 'or')}`);
  return parts.join('; ');
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

/** "Every channel also takes optional idempotency_key." (fields left out of the variant sentences) */
function commonSentence(def: UnionDef): string {
  if (!def.commonFields.length) return '';
  const optional = def.commonFields.filter((f) => def.variants.every((v) => !v.required.includes(f)));
  const required = def.commonFields.filter((f) => !optional.includes(f));
  const parts = [required.length ? listWords(required) : '', optional.length ? `optional ${listWords(optional)}` : ''];
  return `Every ${def.options.variantNoun} also takes ${parts.filter(Boolean).join(' and ')}.`;
}

/** Description of one variant's own tool (the `per-<variantNoun>` profile). */
export function describeVariant(def: UnionDef, variant: Variant): string {
  const takes = fieldsSentence(def, variant);
  return [variant.meta.description, `${takes[0]!.toUpperCase()}${takes.slice(1)}.`, def.options.outro]
    .filter(Boolean)
    .join(' ');
}
