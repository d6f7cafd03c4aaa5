/**
 * Free-form values (open objects, typeless values) under OpenAI strict mode, which closes
 * every object: the nested profile carries each as JSON text and the validator parses it
 * back, so the union validates the same value under every profile. Beside a string
 * alternative one is refused, since the text would not say which of the two it is.
 */
import { UnionDefinitionError } from './define.js';
import { describeKey, describeValue } from './echo.js';
import { cloneJson, type JsonSchema } from './json-schema.js';

const isSchema = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);
const TYPED = ['type', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', '$ref', 'properties', 'items', 'not'];

/** Property names, and `*` for every item of an array. */
export type FreeFormPath = readonly (string | typeof ITEMS)[];
export const ITEMS = Symbol('items');

/** A value strict mode cannot carry as it is: an open object, or a node that names no type. */
export function isFreeForm(node: JsonSchema): boolean {
  if (!TYPED.some((k) => k in node)) return true;
  if (node.type !== 'object' && !isSchema(node.properties)) return false;
  const extra = node.additionalProperties;
  return (extra !== undefined && extra !== false) || isSchema(node.patternProperties);
}

/** What the strict profile sends instead: JSON text, said so in the description. */
export function asJsonText(node: JsonSchema): JsonSchema {
  const what = TYPED.some((k) => k in node) ? 'an object as JSON text' : 'any JSON value as text';
  const said = typeof node.description === 'string' ? `${node.description} ` : '';
  return { type: 'string', description: `${said}(${what})` };
}

/**
 * A copy of `schema` with every free-form value below its root carried as JSON text (the
 * other keywords untouched): the shape for a client that makes a schema strict itself.
 */
export function withJsonText(schema: JsonSchema): JsonSchema {
  return textNode(cloneJson(schema), true);
}

function textNode(node: JsonSchema, root = false): JsonSchema {
  if (!root && isFreeForm(node)) return asJsonText(node);
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(node[key])) node[key] = (node[key] as unknown[]).map((n) => (isSchema(n) ? textNode(n) : n));
  }
  if (isSchema(node.properties)) {
    for (const [name, child] of Object.entries(node.properties)) if (isSchema(child)) node.properties[name] = textNode(child);
  }
  if (isSchema(node.items)) node.items = textNode(node.items);
  return node;
}

const paths = new WeakMap<JsonSchema, FreeFormPath[]>();

/** Where a variant's free-form values are, relative to the variant (computed once per schema). */
export function freeFormPaths(json: JsonSchema): FreeFormPath[] {
  let found = paths.get(json);
  if (!found) paths.set(json, (found = walk(json, [])));
  return found;
}

function walk(node: JsonSchema, at: FreeFormPath): FreeFormPath[] {
  if (at.length && isFreeForm(node)) return [at];
  const alternatives = [node.anyOf, node.oneOf].flatMap((list) => (Array.isArray(list) ? list.filter(isSchema) : []));
  const out: FreeFormPath[] = [];
  if (alternatives.some((a) => isFreeForm(a))) {
    if (alternatives.some((a) => a.type === 'string')) {
      throw new UnionDefinitionError(
        `${label(at)}: a free-form alternative beside a string one cannot be carried as JSON text in strict mode`,
      );
    }
    out.push(at);
  }
  for (const alt of alternatives) if (!isFreeForm(alt)) out.push(...walk(alt, at));
  if (isSchema(node.properties)) {
    for (const [key, child] of Object.entries(node.properties)) if (isSchema(child)) out.push(...walk(child, [...at, key]));
  }
  if (isSchema(node.items)) out.push(...walk(node.items, [...at, ITEMS]));
  return out;
}

const label = (at: FreeFormPath) => at.map((s) => (s === ITEMS ? '*' : s)).join('.') || '/';

export interface JsonTextProblem {
  segments: PropertyKey[];
  message: string;
}

/**
 * The call with the JSON text at `paths` parsed back. A value that is not a string is left
 * for the validator (a client may send the object itself); text that is not JSON is a problem.
 */
export function decodeJsonText(
  json: JsonSchema,
  call: Record<string, unknown>,
): { value: Record<string, unknown>; problems: JsonTextProblem[] } {
  const problems: JsonTextProblem[] = [];
  let value = call;
  for (const path of freeFormPaths(json)) value = decodeAt(value, path, [], problems) as Record<string, unknown>;
  return { value, problems };
}

function decodeAt(node: unknown, path: FreeFormPath, segments: PropertyKey[], problems: JsonTextProblem[]): unknown {
  if (!path.length) {
    if (typeof node !== 'string') return node;
    try {
      return JSON.parse(node) as unknown;
    } catch {
      // Not the parser's message: it quotes the text, which only ./echo.ts may do.
      const where = segments.map((s) => describeKey(s)).join('.');
      problems.push({
        segments,
        message: `${where} must be JSON text (this tool's shape carries free-form values as text), and ${describeValue(node)} is not.`,
      });
      return node;
    }
  }
  const [head, ...rest] = path;
  if (head === ITEMS) {
    return Array.isArray(node) ? node.map((item, i) => decodeAt(item, rest, [...segments, i], problems)) : node;
  }
  if (typeof node !== 'object' || node === null || Array.isArray(node) || !Object.hasOwn(node, head!)) return node;
  const copy = { ...(node as Record<string, unknown>) };
  const value = decodeAt(copy[head!], rest, [...segments, head!], problems);
  Object.defineProperty(copy, head!, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}
