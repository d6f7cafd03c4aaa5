/**
 * A tagged union, defined once in zod, and what every profile, description and validator
 * is generated from. Knows nothing of what the union is about.
 */
import { z } from 'zod';
import { toJsonSchema, type JsonSchema } from './json-schema.js';
import { exampleOf, limitsOf } from './limits.js';

/** How advice names a string format: `a URL`, e.g. `https://example.com/`. */
export interface FormatWords {
  noun: string;
  example: string;
}

export interface UnionOptions {
  /** The polymorphic tool's name, e.g. `send_thing`. */
  toolName: string;
  title: string;
  /** First sentence of the generated description; empty when the tool's name says it. */
  intro: string;
  /** Sentence(s) appended after the variants' own sentences (rules common to every variant). */
  outro?: string;
  /**
   * What a variant is called in error codes, messages and the one-tool-per-variant profile's
   * name, e.g. `shape` → FIELD_NOT_ON_SHAPE and `per-shape`.
   */
  variantNoun: string;
  /** Tool name of a variant under its own profile (`per-<variantNoun>`). */
  variantToolName: (value: string) => string;
  /** The one property that wraps the union under the nested (strict) profile. */
  nestedKey: string;
  /**
   * String formats in words with an example, for the advice on a value of the wrong format
   * (`{ ipv4: { noun: 'an IPv4 address', example: '192.0.2.1' } }`); merged over the
   * library's own (url, datetime, date, uuid).
   */
  formats?: Readonly<Record<string, FormatWords>>;
  /**
   * `json-text`: free-form values (open objects, untyped nodes) travel as JSON text under
   * every profile, as they always do under `nested`, and the validator parses them back. For
   * clients that make any shape strict themselves (OpenAI Agents' convertSchemasToStrict),
   * which refuse an open object. Without it only `nested` does so.
   */
  freeForm?: 'json-text';
  /**
   * Where definition warnings go (a union past MANY_VARIANTS variants); by default
   * `process.emitWarning`, which writes to stderr, never stdout.
   */
  onWarning?: (message: string) => void;
}

/** Past this many variants one tool stops paying: its description and schema grow with each. */
export const MANY_VARIANTS = 8;

/** Per-variant metadata, attached with `.meta({ description, limits })` on each branch. */
export interface VariantMeta {
  /** One sentence: what the variant is for and the rules its schema cannot state. */
  description: string;
  /**
   * Limits said by hand, for rules the schema cannot state (a refinement's): by field, each
   * replacing that field's generated phrase (`{ body: '160 GSM-7 characters' }`); or one
   * phrase replacing all of them. Without it, every limit is generated from the schema.
   */
  limits?: string | Readonly<Record<string, string>>;
}

export interface Variant {
  value: string;
  schema: z.ZodObject;
  meta: VariantMeta;
  /** Input JSON Schema of the branch, discriminator included (as `const`). */
  json: JsonSchema;
  fields: string[];
  required: string[];
  /** Each field's limits in words: generated from its schema, or the field's override. */
  limits: Record<string, string>;
}

export interface UnionDef {
  discriminator: string;
  variants: Variant[];
  /** Fields that every variant takes (listed once in descriptions). */
  commonFields: string[];
  options: UnionOptions;
}

export class UnionDefinitionError extends Error {
  override readonly name = 'UnionDefinitionError';
}

export function defineUnion(union: z.ZodDiscriminatedUnion, options: UnionOptions): UnionDef {
  const discriminator = union._zod.def.discriminator;
  const variants = union.options.map((option): Variant => {
    if (!(option instanceof z.ZodObject)) throw new UnionDefinitionError('every variant must be a z.object');
    const tag = option.shape[discriminator];
    if (!(tag instanceof z.ZodLiteral) || typeof tag.value !== 'string') {
      throw new UnionDefinitionError(`every variant needs a string literal "${discriminator}"`);
    }
    const meta = option.meta() as Partial<VariantMeta> | undefined;
    if (!meta?.description) throw new UnionDefinitionError(`variant "${tag.value}" needs .meta({ description })`);
    const json = toJsonSchema(option.strict());
    delete json.description;
    const fields = Object.keys(option.shape).filter((k) => k !== discriminator);
    return {
      value: tag.value,
      schema: option,
      meta: { description: meta.description, limits: meta.limits },
      json,
      fields,
      required: ((json.required as string[] | undefined) ?? []).filter((k) => k !== discriminator),
      limits: fieldLimits(tag.value, option, json, fields, meta.limits),
    };
  });
  if (variants.length > MANY_VARIANTS) {
    const warn = options.onWarning ?? ((message: string) => process.emitWarning(message, { code: 'UNION_MANY_VARIANTS' }));
    warn(
      `${options.toolName} has ${variants.length} variants (${discriminator}): past about ${MANY_VARIANTS}, one tool's description and schema ` +
        `grow past what a model reads well; split it into several tools, or serve the per-${options.variantNoun} profile.`,
    );
  }
  const commonFields = variants[0]!.fields.filter((f) => variants.every((v) => v.fields.includes(f)));
  return { discriminator, variants, commonFields, options };
}

/**
 * Each field's limits: the override where one is given, else generated from the field's JSON
 * Schema. An override of a field the variant lacks, or an example its own field refuses, is a
 * definition error: either would make descriptions say what the schema does not hold.
 */
function fieldLimits(
  value: string,
  option: z.ZodObject,
  json: JsonSchema,
  fields: string[],
  given: VariantMeta['limits'],
): Record<string, string> {
  const overrides = typeof given === 'object' ? given : {};
  for (const field of Object.keys(overrides)) {
    if (!fields.includes(field)) throw new UnionDefinitionError(`variant "${value}" has limits for "${field}", which it does not take`);
  }
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const out: Record<string, string> = {};
  for (const field of fields) {
    const node = properties[field] ?? {};
    const examples = Array.isArray(node.examples) ? node.examples : [];
    for (const example of examples) {
      if (!(option.shape[field] as z.ZodType).safeParse(example).success) {
        throw new UnionDefinitionError(
          `variant "${value}": the example ${JSON.stringify(exampleOf({ examples: [example] }))} of "${field}" does not pass its own schema`,
        );
      }
    }
    const phrase = Object.hasOwn(overrides, field) ? overrides[field] : limitsOf(node);
    if (phrase) out[field] = phrase;
  }
  return out;
}
