import { canonicalJson, schemaHash } from '@notify-mcp/union';
import type { Tool } from './types.js';

/** Keywords whose array is a set: reordering it changes no instance's validity. */
const SET_KEYWORDS = new Set(['required', 'enum', 'type']);
/** Keywords whose value is one subschema (or, for `items` in older drafts, a list of them). */
const SCHEMA_KEYWORDS = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
]);
/**
 * Keywords whose value is a list of subschemas. Their order is kept: `prefixItems` is
 * positional, and the order of `anyOf`/`oneOf` alternatives is what a model reads first.
 */
const SCHEMA_LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function sortedSet(values: readonly unknown[]): unknown[] {
  return values
    .map((v) => [canonicalJson(v), v] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, v]) => v);
}

function mapValues(map: Json, fn: (v: unknown) => unknown): Json {
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, fn(v)]));
}

/**
 * The schema with every set-valued keyword sorted, walking only schema positions: data
 * (`const`, `default`, `enum` members, `examples`) and annotations are kept as they are, so
 * a property that happens to be named `required` is not mistaken for the keyword.
 */
function normalizeSchema(schema: unknown): unknown {
  if (!isObject(schema)) return schema; // `true`/`false` schemas, or not a schema at all
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (SET_KEYWORDS.has(key) && Array.isArray(value)) out[key] = sortedSet(value);
    else if (SCHEMA_KEYWORDS.has(key)) out[key] = Array.isArray(value) ? value.map(normalizeSchema) : normalizeSchema(value);
    else if (SCHEMA_LIST_KEYWORDS.has(key) && Array.isArray(value)) out[key] = value.map(normalizeSchema);
    else if (SCHEMA_MAP_KEYWORDS.has(key) && isObject(value)) out[key] = mapValues(value, normalizeSchema);
    else if (key === 'dependentRequired' && isObject(value)) {
      out[key] = mapValues(value, (v) => (Array.isArray(v) ? sortedSet(v) : v));
    } else if (key === 'dependencies' && isObject(value)) {
      out[key] = mapValues(value, (v) => (Array.isArray(v) ? sortedSet(v) : normalizeSchema(v)));
    } else out[key] = value;
  }
  return out;
}

/**
 * The tool's hash by meaning, for drift: `schemaHash` of the tool with the order of its
 * schemas' set-valued keywords (`required`, `enum`, `type`, `dependentRequired`) ignored.
 * An upstream that reorders `required` has changed the bytes it serves (the list fingerprint
 * changes) but not what its tool accepts (this hash does not).
 */
export function semanticSchemaHash(tool: Tool): string {
  const normalized: Json = { ...tool, inputSchema: normalizeSchema(tool.inputSchema) };
  if (tool.outputSchema !== undefined) normalized.outputSchema = normalizeSchema(tool.outputSchema);
  return schemaHash(normalized);
}
