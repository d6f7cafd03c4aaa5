/**
 * JSON types checked against the variant's schema before zod sees a value: zod's length
 * checks run on any object with a `length` key, and so can call a client's `toString` or
 * recurse through a deep array. The walk follows the schema, not the data, so its depth is
 * the schema's.
 */
import type { JsonSchema } from './json-schema.js';
import { listWords } from './describe.js';

export interface TypeMismatch {
  /** Where, relative to the value checked. */
  segments: PropertyKey[];
  /** What the schema admits there, in words: `a string or an array`. */
  expected: string;
  value: unknown;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSchema = (v: unknown): v is JsonSchema => isRecord(v);

const ARTICLE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** The JSON types a node admits by its own `type`, `const` or `enum`; undefined when it does not say. */
function ownTypes(node: JsonSchema): string[] | undefined {
  if (typeof node.type === 'string') return [node.type];
  if (Array.isArray(node.type)) return node.type.filter((t): t is string => typeof t === 'string');
  if ('const' in node) return [jsonTypeOf(node.const)];
  if (Array.isArray(node.enum)) return [...new Set(node.enum.map(jsonTypeOf))];
  return undefined;
}

function admits(types: readonly string[], value: unknown): boolean {
  const t = jsonTypeOf(value);
  return types.includes(t) || (t === 'number' && types.includes('integer') && Number.isInteger(value));
}

function alternativesOf(node: JsonSchema): JsonSchema[] {
  return [node.anyOf, node.oneOf].flatMap((list) => (Array.isArray(list) ? list.filter(isSchema) : []));
}

function expectedOf(node: JsonSchema): string {
  const alternatives = alternativesOf(node);
  if (alternatives.length) return listWords([...new Set(alternatives.map(expectedOf))], 'or');
  const types = ownTypes(node);
  return types
    ? listWords(
        types.map((t) => ARTICLE[t] ?? t),
        'or',
      )
    : 'any value';
}

/** Places in a value whose JSON type the schema does not admit: the first `limit`, and how many in all. */
export interface TypeMismatches {
  list: TypeMismatch[];
  total: number;
}

/** Every place in `value` whose JSON type `schema` does not admit. */
export function typeMismatches(schema: JsonSchema, value: unknown, limit: number, segments: PropertyKey[] = []): TypeMismatches {
  const found: TypeMismatches = { list: [], total: 0 };
  walk(schema, value, segments, found, limit);
  return found;
}

function report(found: TypeMismatches, limit: number, m: TypeMismatch): void {
  found.total += 1;
  if (found.list.length < limit) found.list.push(m);
}

function walk(node: JsonSchema, value: unknown, segments: PropertyKey[], found: TypeMismatches, limit: number): void {
  const alternatives = alternativesOf(node);
  if (alternatives.length) {
    const each = alternatives.map((alt) => typeMismatches(alt, value, limit, segments));
    if (each.every((f) => f.total)) {
      // One alternative of the value's own type: its problem is the one to report (a list
      // with one bad item is that item's problem, not "neither a string nor a list").
      const sameType = alternatives.flatMap((alt, i) => {
        const types = ownTypes(alt);
        return types && admits(types, value) ? [i] : [];
      });
      if (sameType.length === 1) {
        const chosen = each[sameType[0]!]!;
        for (const m of chosen.list) report(found, limit, m);
        found.total += chosen.total - chosen.list.length;
      } else {
        report(found, limit, { segments, expected: expectedOf(node), value });
      }
      return;
    }
  }
  if (Array.isArray(node.allOf)) for (const part of node.allOf.filter(isSchema)) walk(part, value, segments, found, limit);
  const types = ownTypes(node);
  if (types && !admits(types, value)) {
    report(found, limit, { segments, expected: expectedOf(node), value });
    return;
  }
  if (Array.isArray(value) && isSchema(node.items)) {
    for (let i = 0; i < value.length; i += 1) walk(node.items, value[i], [...segments, i], found, limit);
  } else if (isRecord(value)) {
    const properties = isSchema(node.properties) ? node.properties : {};
    const rest = isSchema(node.additionalProperties) ? node.additionalProperties : undefined;
    for (const key of Object.keys(value)) {
      const sub = Object.hasOwn(properties, key) ? properties[key] : rest;
      if (isSchema(sub)) walk(sub, value[key], [...segments, key], found, limit);
    }
  }
}
