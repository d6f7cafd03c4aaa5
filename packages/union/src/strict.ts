/**
 * OpenAI strict mode for a JSON Schema object: every property required, optional ones made
 * nullable (as an `anyOf` with a null branch, which travels further than a type array),
 * `additionalProperties: false` everywhere, and the keywords strict mode rejects moved into
 * the description, in the words of ./limits.ts. `enum`, `pattern`, `format`, `minItems`,
 * `maxItems` stay.
 */
import { cloneJson, type JsonSchema } from './json-schema.js';
import { UnionDefinitionError } from './define.js';
import { asJsonText, isFreeForm } from './free-form.js';
import { exampleOf, lengthPhrase } from './limits.js';

/** Keywords strict mode does not accept; each is restated in words. */
const UNSUPPORTED: Record<string, (v: unknown) => string> = {
  default: (v) => `default ${JSON.stringify(v)}`,
  uniqueItems: () => 'items unique',
  minProperties: (v) => `at least ${v} properties`,
  maxProperties: (v) => `at most ${v} properties`,
  multipleOf: (v) => `a multiple of ${v}`,
  examples: (v) => `e.g. ${exampleOf({ examples: v })}`,
};
const DROPPED = ['$schema', 'patternProperties', 'propertyNames', 'title'];

export interface StrictOptions {
  /**
   * `json-text`: a free-form value (an open object, an untyped node) becomes a string of
   * JSON text, which the caller must parse back (the union validator does, for the nested
   * profile). Without it such a value is a UnionDefinitionError: closing it would make it `{}`
   * and silently drop whatever it is sent.
   */
  freeForm?: 'json-text';
}

export function toStrict(schema: JsonSchema, options: StrictOptions = {}): JsonSchema {
  return strictNode(cloneJson(schema), '', options);
}

function strictNode(node: JsonSchema, at: string, options: StrictOptions): JsonSchema {
  if (at && isFreeForm(node)) {
    if (options.freeForm !== 'json-text') {
      throw new UnionDefinitionError(
        `${at}: strict mode closes every object, so this free-form value would become {} and drop what it is sent; carry it as JSON text (freeForm: 'json-text') or give it properties`,
      );
    }
    return asJsonText(node);
  }
  const notes: string[] = [];
  const length = lengthPhrase(node.minLength, node.maxLength);
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
    if (Array.isArray(node[key])) node[key] = (node[key] as JsonSchema[]).map((n, i) => strictNode(n, `${at}/${key}/${i}`, options));
  }
  if (node.oneOf) {
    node.anyOf = node.oneOf;
    delete node.oneOf;
  }
  if (node.items && typeof node.items === 'object') node.items = strictNode(node.items as JsonSchema, `${at}/items`, options);
  if (node.type === 'object' || node.properties) {
    const props = (node.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((node.required as string[] | undefined) ?? []);
    for (const [name, child] of Object.entries(props)) {
      const strict = strictNode(child, `${at}/properties/${name}`, options);
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
