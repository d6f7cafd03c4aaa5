/**
 * `examples` said in words: every node's `examples` keyword moved into its description as
 * `(e.g. …)`, at any depth, or left out where the text given (a tool description) says that
 * example already. Gemini's schema subset has no `examples`, and clients that pass a schema
 * on to it unchanged (LangChain's Gemini path) make the whole tool fail there; a description
 * every model reads. The strict transform (./strict.ts) says them the same way.
 */
import { cloneJson, type JsonSchema } from './json-schema.js';
import { exampleOf } from './limits.js';

export function foldExamples(schema: JsonSchema, saidElsewhere = ''): JsonSchema {
  return foldNode(cloneJson(schema), saidElsewhere);
}

/** Keywords whose value maps names to schemas: a schema there may be named `examples`. */
const MAPS = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions']);

function foldNode(node: JsonSchema, elsewhere: string): JsonSchema {
  if (Array.isArray(node.examples)) {
    const example = exampleOf(node);
    delete node.examples;
    const note = example === undefined ? undefined : `e.g. ${example}`;
    const said = typeof node.description === 'string' ? node.description : '';
    if (note && !said.includes(note) && !elsewhere.includes(note)) node.description = said ? `${said} (${note})` : `(${note})`;
  }
  for (const [key, value] of Object.entries(node)) {
    // `const`, `enum` and `default` hold values, not schemas: an object there is left as it is.
    if (key === 'const' || key === 'enum' || key === 'default') continue;
    if (Array.isArray(value)) node[key] = value.map((v) => (isSchema(v) ? foldNode(v, elsewhere) : v));
    else if (isSchema(value)) node[key] = MAPS.has(key) ? foldMap(value, elsewhere) : foldNode(value, elsewhere);
  }
  return node;
}

function foldMap(map: JsonSchema, elsewhere: string): JsonSchema {
  for (const [name, child] of Object.entries(map)) if (isSchema(child)) map[name] = foldNode(child, elsewhere);
  return map;
}

const isSchema = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);
