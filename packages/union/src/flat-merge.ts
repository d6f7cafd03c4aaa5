/**
 * One field of the flat shape, merged from the variants that take it: their rules as an
 * `anyOf`, less any rule another admits whole, so that every variant's valid value passes.
 */
import type { Variant } from './define.js';
import { cloneJson, type JsonSchema } from './json-schema.js';
import { canonicalJson } from './schema-hash.js';

export function mergeField(field: string, variants: readonly Variant[]): JsonSchema {
  const rules = new Map<string, JsonSchema>();
  for (const v of variants) {
    const { description: _description, examples: _examples, ...rule } = cloneJson((v.json.properties as Record<string, JsonSchema>)[field]!);
    rules.set(canonicalJson(rule), rule);
  }
  const groups = [...rules.values()].flatMap((g) => (Array.isArray(g.anyOf) && Object.keys(g).length === 1 ? (g.anyOf as JsonSchema[]) : [g]));
  const kept = groups.filter((g, i) => !groups.some((other, j) => j !== i && subsumes(other, g) && (!subsumes(g, other) || j < i)));
  return kept.length === 1 ? kept[0]! : { anyOf: kept };
}

/** Keywords that only narrow a value, each on its own: a rule that adds them to another admits less. */
const NARROWING = new Set(['pattern', 'format', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems', 'enum', 'const']);

/**
 * Whether every value `narrow` admits, `wide` admits too: `wide`'s keywords are some of
 * `narrow`'s, the rest narrowing ones. An `anyOf` branch so subsumed adds tokens and no
 * value (a patterned string beside a plain one); the description still says the narrower rule.
 */
function subsumes(wide: JsonSchema, narrow: JsonSchema): boolean {
  const w = wide as Record<string, unknown>;
  const n = narrow as Record<string, unknown>;
  return (
    Object.keys(w).every((k) => Object.hasOwn(n, k) && canonicalJson(w[k]) === canonicalJson(n[k])) &&
    Object.keys(n).every((k) => Object.hasOwn(w, k) || NARROWING.has(k))
  );
}
