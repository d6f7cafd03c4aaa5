/**
 * Branch-first validation: read the discriminator, then validate against that variant
 * alone, so every problem is reported in that variant's terms with a fix the caller can
 * apply. Total over whatever a client can send: any JSON value in any position ends in a
 * result, never a throw. Every rejection carries code, path (a JSON Pointer into the
 * arguments as sent) and message; client data reaches messages only through ./echo.ts.
 */
import { z } from 'zod';
import type { FormatWords, UnionDef, Variant } from './define.js';
import { fieldList, listWords, wholeLimits } from './describe.js';
import { describeKey, describeValue } from './echo.js';
import { toJsonSchema, type JsonSchema } from './json-schema.js';
import { decodeJsonText } from './free-form.js';
import {
  fail,
  fieldLabel,
  issuePath,
  Issues,
  MAX_ISSUES,
  notAnObject,
  pointer,
  type ValidationFailure,
  type ValidationIssue,
  type ValidationResult,
} from './issues.js';
import { limitsOfObject } from './limits.js';
import { typeMismatches, type TypeMismatch } from './json-type.js';
import { addLoneSurrogates } from './lone-surrogates.js';
import type { ProfileTool } from './profiles.js';
import { isRecord, own } from './record.js';
import { addZodIssues, FORMATS, hintFor, type FieldContext, type IssueContext } from './zod-issues.js';

/** `null` means absent for optional fields (the strict profile sends nulls). */
export function dropNulls(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
}

/**
 * The same at every depth, for the strict shape: there every optional property of every
 * object (an attachment's, a block's) is required-but-nullable, so null means absent anywhere.
 */
export function dropNullsDeep(value: unknown, depth = 0): unknown {
  // A strict shape nests a few objects deep (a list of attachments, a block's elements): below
  // that nothing is ours to clean, and a client's value may nest as deep as the wire allows.
  if (depth > NULLABLE_DEPTH) return value;
  if (Array.isArray(value)) return value.map((v) => dropNullsDeep(v, depth + 1));
  if (!isRecord(value)) return value;
  // fromEntries defines own properties: a `__proto__` key stays a key, never a prototype.
  return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (v === null ? [] : [[k, dropNullsDeep(v, depth + 1)]])));
}

/** How deep dropNullsDeep looks: deeper than any strict shape's optional property. */
const NULLABLE_DEPTH = 16;

/** Each value a successful validation returned, with the zod schema whose parse made it. */
const producedBy = new WeakMap<object, z.ZodType>();

/**
 * Whether `value` is what validating with `schema` returned (the same object), so a
 * consumer holding that schema can take it as parsed instead of parsing it again.
 */
export function parsedWith(value: unknown, schema: z.ZodType): boolean {
  return typeof value === 'object' && value !== null && producedBy.get(value) === schema;
}

/** Validates a tools/call's arguments for one profile tool against the union. */
export function validateUnionCall(def: UnionDef, binding: ProfileTool['binding'], raw: unknown): ValidationResult {
  const disc = def.discriminator;
  const discCode = `INVALID_${disc.toUpperCase()}`;
  let base = '';
  let args: unknown = raw ?? {};
  if (!isRecord(args)) return notAnObject(args);

  if (binding.wrapKey) {
    const key = binding.wrapKey;
    const extra = Object.keys(args).filter((k) => k !== key);
    if (extra.length) {
      return fail({
        code: 'INVALID_FIELD',
        path: issuePath('', [extra[0]!]),
        message: `Move ${describeKey(extra[0]!)} inside ${key}: every field goes there, nothing at the top level.`,
      });
    }
    const inner = own(args, key);
    if (!isRecord(inner)) {
      const needs = `Send ${key} as an object with ${disc} set to ${variantList(def)}`;
      return inner === undefined || inner === null
        ? fail({ code: 'MISSING_FIELD', path: pointer('', [key]), message: `${needs}: it is required.` })
        : fail({ code: 'INVALID_FIELD', path: pointer('', [key]), message: `${needs}, not ${describeValue(inner)}.` });
    }
    args = inner;
    base = pointer('', [key]);
  }
  const call = binding.wrapKey ? (dropNullsDeep(args) as Record<string, unknown>) : dropNulls(args as Record<string, unknown>);

  if (binding.impliedVariant) {
    const implied = binding.impliedVariant;
    const sent = own(call, disc);
    if (sent !== undefined && sent !== implied) {
      const other = def.variants.find((v) => v.value === sent);
      const fix = other ? `drop ${disc}, or call ${def.options.variantToolName(other.value)}` : `drop ${disc}`;
      return fail({
        code: discCode,
        path: pointer(base, [disc]),
        message: `${fix[0]!.toUpperCase()}${fix.slice(1)}: this tool always uses ${disc} ${implied}, not ${describeValue(sent)}.`,
        variant: implied,
      });
    }
    call[disc] = implied;
  }

  const tag = own(call, disc);
  const variant = def.variants.find((v) => v.value === tag);
  if (!variant) {
    const noun = def.options.variantNoun;
    const what = tag === undefined ? 'it is required' : `${describeValue(tag)} is not a ${noun}`;
    return fail({ code: discCode, path: pointer(base, [disc]), message: `Set ${disc} to ${variantList(def)}: ${what}.` });
  }

  const found = new Issues();
  for (const field of Object.keys(call)) {
    if (field === disc || variant.fields.includes(field)) continue;
    found.add(() => ({
      code: `FIELD_NOT_ON_${def.options.variantNoun.toUpperCase()}`,
      path: issuePath(base, [field]),
      message: notOnVariant(def, variant, field, binding),
      variant: variant.value,
    }));
  }
  // Nothing found yet: every field is the variant's, and `call` (already a copy) is what it takes.
  let known = found.size ? Object.fromEntries(Object.entries(call).filter(([k]) => k === disc || variant.fields.includes(k))) : call;
  if (binding.jsonText) {
    // The strict shape sends free-form values as JSON text: parsed back, the union sees what other shapes send.
    const decoded = decodeJsonText(variant.json, known);
    for (const p of decoded.problems)
      found.add(() => ({ code: 'INVALID_FIELD', path: issuePath(base, p.segments), message: p.message, variant: variant.value }));
    if (decoded.problems.length) return found.failure()!;
    known = decoded.value;
  }
  const ctx = { subject: variant.value, variant: variant.value, limits: variant.limits, formats: formatsOf(def) };
  const value = checkFields(variant.schema, variant.json, known, base, ctx, found);
  return found.failure() ?? { ok: true, variant: variant.value, value: value as Record<string, unknown> };
}

/** FORMATS with the union's own words over them, merged once per union rather than on every call. */
const unionFormats = new WeakMap<UnionDef, Readonly<Record<string, FormatWords>>>();
function formatsOf(def: UnionDef): Readonly<Record<string, FormatWords>> {
  let formats = unionFormats.get(def);
  if (!formats) unionFormats.set(def, (formats = { ...FORMATS, ...def.options.formats }));
  return formats;
}

/** Validates the arguments of a plain object tool; same issue shapes as the union's. */
export function validateObject<S extends z.ZodObject>(
  schema: S,
  toolName: string,
  raw: unknown,
): { ok: true; value: z.infer<S> } | ValidationFailure {
  const args = raw ?? {};
  if (!isRecord(args)) return notAnObject(args);
  const call = dropNulls(args);
  const found = new Issues();
  const json = jsonOf(schema);
  const value = checkFields(schema, json, call, '', { subject: toolName, limits: limitsOfObject(json), formats: FORMATS }, found);
  return found.failure() ?? { ok: true, value: value as z.infer<S> };
}

/**
 * Problems with the fields the schema takes. Before zod, each field's JSON types are
 * checked against the JSON Schema and its text for lone surrogates; a field with such a
 * problem is reported from here and withheld from zod, which only refines values of the
 * right type (./json-type.ts says why).
 */
function checkFields(
  schema: z.ZodObject,
  json: JsonSchema,
  call: Record<string, unknown>,
  base: string,
  ctx: FieldContext,
  found: Issues,
): unknown {
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const withheld = new Set<string>();
  for (const [field, value] of Object.entries(call)) {
    if (!Object.hasOwn(schema.shape, field)) continue;
    const before = found.size;
    const rule = Object.hasOwn(properties, field) ? properties[field] : undefined;
    const mismatches = rule ? typeMismatches(rule, value, MAX_ISSUES, [field]) : { list: [], total: 0 };
    for (const m of mismatches.list) found.add(() => typeIssue(m, { ...ctx, schema }, base));
    found.count(mismatches.total - mismatches.list.length);
    if (!mismatches.total) addLoneSurrogates(field, value, base, ctx.variant, found);
    if (found.size > before) withheld.add(field);
  }
  const input = withheld.size ? Object.fromEntries(Object.entries(call).filter(([k]) => !withheld.has(k))) : call;
  const parsed = schema.safeParse(input);
  if (parsed.success) {
    if (isRecord(parsed.data)) producedBy.set(parsed.data, schema);
    return parsed.data;
  }
  const issues = parsed.error.issues.filter((i) => !(typeof i.path[0] === 'string' && withheld.has(i.path[0])));
  addZodIssues(issues, input, base, { ...ctx, schema }, found);
  return undefined;
}

function typeIssue(m: TypeMismatch, { schema, limits, variant }: IssueContext, base: string): ValidationIssue {
  const hint = hintFor(schema, m.segments, limits);
  const message = `Send ${fieldLabel(base, m.segments)} as ${m.expected}, not ${describeValue(m.value)}.${hint ? ` Expected ${hint}.` : ''}`;
  const issue = { code: 'INVALID_FIELD', path: issuePath(base, m.segments), message };
  return variant ? { ...issue, variant } : issue;
}

/** JSON Schemas of plain object tools, made once per zod schema. */
const objectJson = new WeakMap<z.ZodObject, JsonSchema>();
function jsonOf(schema: z.ZodObject): JsonSchema {
  let json = objectJson.get(schema);
  if (!json) objectJson.set(schema, (json = toJsonSchema(schema)));
  return json;
}

function variantList(def: UnionDef): string {
  return listWords(
    def.variants.map((v) => v.value),
    'or',
  );
}

/**
 * What to do about a field the variant does not take. The other variants that take it are
 * named as the caller reaches them: by the discriminator, or under a profile of one tool per
 * variant (where there is no discriminator to set), by their tools' names.
 */
function notOnVariant(def: UnionDef, variant: Variant, field: string, binding: ProfileTool['binding']): string {
  const distinct = variant.fields.filter((f) => !def.commonFields.includes(f));
  const own = distinct.length ? distinct : variant.fields;
  const others = def.variants.filter((v) => v.fields.includes(field)).map((v) => v.value);
  const name = describeKey(field);
  const switchTo = binding.impliedVariant
    ? `call ${listWords(
        others.map((v) => def.options.variantToolName(v)),
        'or',
      )}`
    : `set ${def.discriminator} to ${listWords(others, 'or')}`;
  const fix = others.length ? `Drop ${name}, or ${switchTo}` : `Drop ${name}`;
  const why = others.length ? '' : ` No ${def.options.variantNoun} takes ${name}.`;
  return `${fix}: ${variant.value} takes ${fieldList(variant, own)} only${wholeLimits(variant)}.${why}`;
}
