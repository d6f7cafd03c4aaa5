/**
 * A tagged union, defined once in zod, and what every profile, description and validator
 * is generated from. Knows nothing of what the union is about.
 */
import { z } from 'zod';
import { toJsonSchema, type JsonSchema } from './json-schema.js';

export interface UnionOptions {
  /** The polymorphic tool's name, e.g. `send_thing`. */
  toolName: string;
  title: string;
  /** First sentence of the generated description. */
  intro: string;
  /** Sentence(s) appended after the variants' own sentences (rules common to every variant). */
  outro?: string;
  /**
   * What a variant is called in error codes, messages and the one-tool-per-variant profile's
   * name, e.g. `channel` → FIELD_NOT_ON_CHANNEL and `per-channel`.
   */
  variantNoun: string;
  /** Tool name of a variant under its own profile (`per-<variantNoun>`). */
  variantToolName: (value: string) => string;
  /** The one property that wraps the union under the nested (strict) profile. */
  nestedKey: string;
}

/** Per-variant metadata, attached with `.meta({ description, limits })` on each branch. */
export interface VariantMeta {
  /** One sentence: what the variant accepts and its rules. */
  description: string;
  /** A short phrase of its limits, quoted in errors, e.g. `160 GSM-7 characters`. */
  limits?: string;
}

export interface Variant {
  value: string;
  schema: z.ZodObject;
  meta: VariantMeta;
  /** Input JSON Schema of the branch, discriminator included (as `const`). */
  json: JsonSchema;
  fields: string[];
  required: string[];
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
    return {
      value: tag.value,
      schema: option,
      meta: { description: meta.description, limits: meta.limits },
      json,
      fields: Object.keys(option.shape).filter((k) => k !== discriminator),
      required: ((json.required as string[] | undefined) ?? []).filter((k) => k !== discriminator),
    };
  });
  const commonFields = variants[0]!.fields.filter((f) => variants.every((v) => v.fields.includes(f)));
  return { discriminator, variants, commonFields, options };
}
