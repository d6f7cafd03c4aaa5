/**
 * The wire shapes of one union: per profile, the tools a client lists and how each tool's
 * arguments map back onto the union, so that validation is always the union's and error
 * paths point into the arguments as sent. The one-tool-per-variant profile is named for the
 * variant noun (`per-shape`), as the error codes are, so an application and the library
 * call it by one name.
 */
import { UnionDefinitionError, type UnionDef, type Variant } from './define.js';
import { describeUnion, describeVariant } from './describe.js';
import { cloneJson, type JsonSchema } from './json-schema.js';
import { canonicalJson } from './schema-hash.js';
import { foldExamples } from './examples.js';
import { freeFormPaths, withJsonText } from './free-form.js';
import { toStrict } from './strict.js';

export type VariantProfile = `per-${string}`;
export type UnionProfile = 'flat' | 'nested' | 'oneOf' | VariantProfile;

/** The profile of one tool per variant: `per-<variantNoun>`. */
export function variantProfile(def: UnionDef): VariantProfile {
  return `per-${def.options.variantNoun}`;
}

/** Every profile of a union, in a fixed order. */
export function unionProfiles(def: UnionDef): UnionProfile[] {
  return ['flat', 'nested', 'oneOf', variantProfile(def)];
}

export interface ProfileTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  /**
   * How this tool's arguments reach the union validator: wrapped in one property, the
   * variant implied by the tool, free-form values sent as JSON text (./free-form.ts).
   */
  binding: { wrapKey?: string; impliedVariant?: string; jsonText?: boolean };
}

export function profileTools(def: UnionDef, profile: UnionProfile): ProfileTool[] {
  const { toolName: name, title } = def.options;
  // With `freeForm: 'json-text'`, every shape carries free-form values as the nested one does.
  const text = def.options.freeForm === 'json-text' && hasFreeForm(def);
  const shaped = (schema: JsonSchema) => (text ? withJsonText(schema) : schema);
  const binding = text ? { jsonText: true } : {};
  switch (profile) {
    case 'flat':
      return [{ name, title, description: describeUnion(def, true), inputSchema: shaped(flatSchema(def)), binding }];
    case 'nested':
      return [{ name, title, description: describeUnion(def), inputSchema: nestedSchema(def), binding: nestedBinding(def) }];
    case 'oneOf': {
      const description = describeUnion(def);
      return [{ name, title, description, inputSchema: foldExamples(shaped(oneOfSchema(def)), description), binding }];
    }
  }
  if (profile !== variantProfile(def)) {
    throw new UnionDefinitionError(`"${profile}" is not a profile of this union; its profiles are ${unionProfiles(def).join(', ')}`);
  }
  return def.variants.map((v) => {
    const description = describeVariant(def, v);
    return {
      name: def.options.variantToolName(v.value),
      title: `${title} (${v.value})`,
      description,
      inputSchema: foldExamples(shaped(withoutDiscriminator(def, v)), description),
      binding: { impliedVariant: v.value, ...binding },
    };
  });
}

/**
 * One object: the discriminator an enum, every field optional. A field that variants share
 * with different rules becomes an `anyOf` of each variant's rule, so that every variant's
 * valid value passes (taking the first variant's rule would reject the others'). The words
 * (field descriptions, examples) are left out: the flat tool's description says them once,
 * by variant, where a merged field could not.
 */
export function flatSchema(def: UnionDef): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    [def.discriminator]: { type: 'string', enum: def.variants.map((v) => v.value) },
  };
  const owners = new Map<string, Variant[]>();
  for (const v of def.variants) for (const f of v.fields) owners.set(f, [...(owners.get(f) ?? []), v]);
  for (const [field, variants] of owners) properties[field] = mergeField(field, variants);
  return { type: 'object', properties, required: [def.discriminator], additionalProperties: false };
}

function mergeField(field: string, variants: Variant[]): JsonSchema {
  const rules = new Map<string, JsonSchema>();
  for (const v of variants) {
    const {
      description: _description,
      examples: _examples,
      ...rule
    } = cloneJson((v.json.properties as Record<string, JsonSchema>)[field]!);
    rules.set(canonicalJson(rule), rule);
  }
  const groups = [...rules.values()];
  if (groups.length === 1) return groups[0]!;
  return { anyOf: groups.flatMap((g) => (Array.isArray(g.anyOf) && Object.keys(g).length === 1 ? (g.anyOf as JsonSchema[]) : [g])) };
}

const hasFreeForm = (def: UnionDef) => def.variants.some((v) => freeFormPaths(v.json).length > 0);

function nestedBinding(def: UnionDef): ProfileTool['binding'] {
  return hasFreeForm(def) ? { wrapKey: def.options.nestedKey, jsonText: true } : { wrapKey: def.options.nestedKey };
}

/**
 * OpenAI strict mode: one required wrapper property holding an `anyOf` of closed variants;
 * free-form values travel as JSON text, which the validator parses back.
 */
export function nestedSchema(def: UnionDef): JsonSchema {
  return toStrict(
    {
      type: 'object',
      properties: { [def.options.nestedKey]: { anyOf: def.variants.map(withOverriddenLimits) } },
      required: [def.options.nestedKey],
      additionalProperties: false,
    },
    { freeForm: 'json-text' },
  );
}

/**
 * A variant's JSON Schema where a hand-written limit replaces the length keywords that strict
 * mode restates in words: the override is the rule (a refinement's), the keyword only its bound.
 */
function withOverriddenLimits(v: Variant): JsonSchema {
  const json = cloneJson(v.json);
  const overrides = typeof v.meta.limits === 'object' ? v.meta.limits : {};
  const properties = json.properties as Record<string, JsonSchema>;
  for (const [field, phrase] of Object.entries(overrides)) {
    const node = properties[field];
    if (!node || !('minLength' in node || 'maxLength' in node)) continue;
    delete node.minLength;
    delete node.maxLength;
    node.description = typeof node.description === 'string' ? `${node.description} (${phrase})` : phrase;
  }
  return json;
}

/**
 * SEP-2106: root `type: "object"` with a `oneOf` of closed variants, the discriminator a
 * `const`. (profileTools folds its `examples` into words, as the per-variant tools'.)
 */
export function oneOfSchema(def: UnionDef): JsonSchema {
  return { type: 'object', oneOf: def.variants.map((v) => cloneJson(v.json)) };
}

function withoutDiscriminator(def: UnionDef, v: Variant): JsonSchema {
  const json = cloneJson(v.json);
  delete (json.properties as Record<string, unknown>)[def.discriminator];
  json.required = ((json.required as string[]) ?? []).filter((k) => k !== def.discriminator);
  return json;
}
