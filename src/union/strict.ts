/**
 * OpenAI strict mode for a JSON Schema object: every property required, optional ones made
 * nullable (as an `anyOf` with a null branch, which travels further than a type array),
 * `additionalProperties: false` everywhere, and the keywords strict mode rejects moved into
 * the description. `enum`, `pattern`, `format`, `minItems`, `maxItems` stay.
 */
import { cloneJson, type JsonSchema } from './json-schema.js';

/** Keywords strict mode does not accept; each is restated in words. */
const UNSUPPORTED: Record<string, (v: unknown) => string> = {
  default: (v) => `default ${JSON.stringify(v)}`,
  uniqueItems: () => 'items unique',
  minProperties: (v) => `at least ${v} properties`,
  maxProperties: (v) => `at most ${v} properties`,
  multipleOf: (v) => `a multiple of ${v}`,
};
const DROPPED = ['$schema', 'examples', 'patternProperties', 'propertyNames', 'title'];

export function toStrict(schema: JsonSchema): JsonSchema {
  return strictNode(cloneJson(schema));
}

function strictNode(node: JsonSchema): JsonSchema {
  const notes: string[] = [];
  const length = lengthNote(node.minLength, node.maxLength);
  if (length) notes.push(length);
  delete node.minLength;
  delete node.maxLength;
  for (const [key, say] of Object.entries(UNSUPPORTED)) {
    if (key in node) {
      notes.push(say(node[key]));
      delete node[key];
    }
  }
  for (const key of DROPPED) delete node[key];
  if ('const' in node) {
    node.enum = [node.const];
    delete node.const;
  }
  const said = typeof node.description === 'string' ? node.description : '';
  const unsaid = notes.filter((n) => !said.includes(n));
  if (unsaid.length) node.description = [said, `(${unsaid.join(', ')})`].filter(Boolean).join(' ');

  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (Array.isArray(node[key])) node[key] = (node[key] as JsonSchema[]).map(strictNode);
  }
  if (node.oneOf) {
    node.anyOf = node.oneOf;
    delete node.oneOf;
  }
  if (node.items && typeof node.items === 'object') node.items = strictNode(node.items as JsonSchema);
  if (node.type === 'object' || node.properties) {
    const props = (node.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((node.required as string[] | undefined) ?? []);
    for (const [name, child] of Object.entries(props)) {
      const strict = strictNode(child);
      props[name] = required.has(name) ? strict : nullable(strict);
    }
    node.properties = props;
    node.required = Object.keys(props);
    node.additionalProperties = false;
  }
  return node;
}

function nullable(node: JsonSchema): JsonSchema {
  const { description, ...rest } = node;
  const branches = Array.isArray(rest.anyOf) && Object.keys(rest).length === 1 ? (rest.anyOf as JsonSchema[]) : [rest];
  const anyOf = [...branches.filter((b) => b.type !== 'null'), { type: 'null' }];
  return description === undefined ? { anyOf } : { anyOf, description };
}

function lengthNote(min: unknown, max: unknown): string | undefined {
  if (typeof max === 'number') return typeof min === 'number' ? `${min}-${max} characters` : `at most ${max} characters`;
  if (typeof min === 'number') return min === 1 ? 'non-empty' : `at least ${min} characters`;
  return undefined;
}
