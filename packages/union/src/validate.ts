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
import { clipText, describeKey, describeValue, ECHO_MAX_CHARS, loneSurrogateAt, POINTER_KEY_MAX_CHARS } from './echo.js';
import { toJsonSchema, type JsonSchema } from './json-schema.js';
import { decodeJsonText } from './free-form.js';
import { limitsOfObject, withLimits } from './limits.js';
import { typeMismatches, type TypeMismatch } from './json-type.js';
import type { ProfileTool } from './profiles.js';

export interface ValidationIssue {
  code: string;
  /** JSON Pointer into the arguments as the client sent them. */
  path: string;
  message: string;
  /** The variant the call was validated against, when known. */
  variant?: string;
}

/** At most this many issues are returned; `omitted` counts the rest. */
export const MAX_ISSUES = 20;

export interface ValidationFailure {
  ok: false;
  issues: [ValidationIssue, ...ValidationIssue[]];
  /** Issues found beyond MAX_ISSUES and left out, so that no call can make an answer of any size. */
  omitted: number;
}

export type ValidationResult<T = Record<string, unknown>> = { ok: true; variant: string; value: T } | ValidationFailure;

/**
 * Issues as they are found: the first MAX_ISSUES kept, the rest only counted, and a
 * message built only for an issue that is kept: a call may hold any number of unknown keys.
 */
class Issues {
  private readonly kept: ValidationIssue[] = [];
  private omitted = 0;

  add(make: () => ValidationIssue): void {
    if (this.kept.length < MAX_ISSUES) this.kept.push(make());
    else this.omitted += 1;
  }

  /** Issues found elsewhere and not described here. */
  count(n: number): void {
    this.omitted += n;
  }

  get size(): number {
    return this.kept.length + this.omitted;
  }

  failure(): ValidationFailure | undefined {
    const [first, ...rest] = this.kept;
    return first ? { ok: false, issues: [first, ...rest], omitted: this.omitted } : undefined;
  }
}

/** An exact JSON Pointer. */
export function pointer(base: string, segments: readonly PropertyKey[]): string {
  return base + segments.map((s) => '/' + pointerToken(s)).join('');
}

function pointerToken(s: PropertyKey): string {
  const raw = typeof s === 'symbol' ? (s.description ?? '') : `${s}`;
  return raw.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The pointer an issue carries. A key longer than POINTER_KEY_MAX_CHARS is not repeated in
 * it: the pointer stops at the object that holds the key, and the message names the key
 * clipped (an answer never echoes a client's megabyte-long key).
 */
function issuePath(base: string, segments: readonly PropertyKey[]): string {
  const long = segments.findIndex((s) => typeof s === 'string' && s.length > POINTER_KEY_MAX_CHARS);
  return pointer(base, long < 0 ? segments : segments.slice(0, long));
}

/**
 * How a message names a place in the arguments: a top-level field by its name (`to`), a
 * deeper place by the JSON Pointer its issue carries (`/points/1`, `/shape/points/1`);
 * clipped, since a place may be deep and a key long.
 */
function fieldLabel(base: string, segments: readonly PropertyKey[]): string {
  if (segments.length === 1 && !base) return describeKey(segments[0]!);
  const tokens = segments.slice(0, 8).map((s) => (typeof s === 'string' && s.length > ECHO_MAX_CHARS ? clipText(s) : s));
  const label = pointer(base, tokens);
  return segments.length > 8 ? `${label}/…` : label;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Own properties only: a client key such as `constructor` must never find an inherited one. */
const own = (o: object, key: PropertyKey): unknown => (Object.hasOwn(o, key) ? (o as Record<PropertyKey, unknown>)[key] : undefined);

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

/** FORMATS with the union's own words over them, merged once per union: merging two spreads per call cost about 1 µs. */
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

/** Who a field belongs to, and what its messages may quote. */
interface FieldContext {
  subject: string;
  variant?: string;
  /** Each field's limits in words (./limits.ts). */
  limits: Readonly<Record<string, string>>;
  /** String formats in words, for advice (UnionOptions.formats over FORMATS). */
  formats: Readonly<Record<string, FormatWords>>;
}

type IssueContext = FieldContext & { schema: z.ZodObject };

/** JSON Schemas of plain object tools, made once per zod schema. */
const objectJson = new WeakMap<z.ZodObject, JsonSchema>();
function jsonOf(schema: z.ZodObject): JsonSchema {
  let json = objectJson.get(schema);
  if (!json) objectJson.set(schema, (json = toJsonSchema(schema)));
  return json;
}

function notAnObject(args: unknown): ValidationFailure {
  return fail({ code: 'INVALID_FIELD', path: '', message: `Send the arguments as a JSON object, not ${describeValue(args)}.` });
}

/** A failure found before any field is looked at: one issue. */
function fail(issue: ValidationIssue): ValidationFailure {
  return { ok: false, issues: [issue], omitted: 0 };
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

/** A path segment chain, shared between siblings so a deep walk stays linear. */
interface Trail {
  key: PropertyKey;
  up: Trail | null;
}

const segmentsOf = (trail: Trail): PropertyKey[] => {
  const out: PropertyKey[] = [];
  for (let t: Trail | null = trail; t; t = t.up) out.push(t.key);
  return out.reverse();
};

/**
 * Every string in a field's value that holds half of a UTF-16 surrogate pair: it cannot be
 * encoded as UTF-8, so it would reach a provider mangled. Iterative, so nesting of any
 * depth is walked without the stack.
 */
function addLoneSurrogates(field: string, value: unknown, base: string, variant: string | undefined, found: Issues): void {
  const todo: [unknown, Trail][] = [[value, { key: field, up: null }]];
  while (todo.length) {
    const [node, trail] = todo.pop()!;
    if (typeof node === 'string') {
      const at = loneSurrogateAt(node);
      if (at >= 0) found.add(() => loneSurrogateIssue(node, at, segmentsOf(trail), base, variant));
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i -= 1) todo.push([node[i], { key: i, up: trail }]);
    } else if (isRecord(node)) {
      for (const [k, v] of Object.entries(node).reverse()) todo.push([v, { key: k, up: trail }]);
    }
  }
}

function loneSurrogateIssue(text: string, at: number, segments: PropertyKey[], base: string, variant?: string): ValidationIssue {
  const unit = text.charCodeAt(at).toString(16).toUpperCase();
  const message = `Send both halves of the surrogate pair in ${fieldLabel(base, segments)}, or drop the character: it holds a lone surrogate (U+${unit}) at character ${at}, and text must be well-formed Unicode.`;
  const issue = { code: 'INVALID_FIELD', path: issuePath(base, segments), message };
  return variant ? { ...issue, variant } : issue;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let node = input;
  for (const seg of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = own(node, seg);
  }
  return node;
}

/** What a field expects: its description, and its limits where the description does not say them. */
function hintFor(schema: z.ZodObject, path: readonly PropertyKey[], limits: Readonly<Record<string, string>>): string | undefined {
  const key = path[0];
  if (typeof key !== 'string' || !Object.hasOwn(schema.shape, key)) return undefined;
  const described = (schema.shape[key] as z.ZodType).description;
  const limit = Object.hasOwn(limits, key) ? limits[key] : undefined;
  if (described && limit) return withLimits(described, limit);
  return described ?? (limit?.startsWith('matching') ? `text ${limit}` : limit);
}

/**
 * One issue per unknown key, each pointing at the key itself; and a union whose value
 * matched one alternative's type reports that alternative's problem (`to` with 51
 * addresses is "at most 50 items", not "invalid input").
 */
function expandIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ ...issue, keys: [key], path: [...issue.path, key] }));
  }
  if (issue.code === 'invalid_union' && issue.errors.length) {
    // An alternative whose root type did not match is not the one the value was meant for,
    // whatever else it reports (zod runs a string's length checks on an array too).
    const typed = issue.errors.filter((alt) => !alt.some((e) => e.code === 'invalid_type' && e.path.length === 0));
    if (typed.length === 1) return typed[0]!.map((e) => ({ ...e, path: [...issue.path, ...e.path] })).flatMap(expandIssue);
  }
  return [issue];
}

function addZodIssues(zodIssues: z.core.$ZodIssue[], input: unknown, base: string, ctx: IssueContext, found: Issues): void {
  for (const issue of zodIssues.flatMap(expandIssue)) found.add(() => zodIssue(issue, input, base, ctx));
}

function zodIssue(issue: z.core.$ZodIssue, input: unknown, base: string, ctx: IssueContext): ValidationIssue {
  const path = issuePath(base, issue.path);
  const field = issue.path.length ? fieldLabel(base, issue.path) : 'the arguments';
  const hint = issue.path.length ? hintFor(ctx.schema, issue.path, ctx.limits) : undefined;
  const expected = hint ? ` Expected ${hint}.` : '';
  const value = valueAt(input, issue.path);
  let code: string;
  let message: string;
  const custom = issue.code === 'custom' ? (issue.params as { code?: string } | undefined)?.code : undefined;
  if (issue.code === 'unrecognized_keys') {
    code = 'INVALID_FIELD';
    const owner = issue.path.length > 1 ? fieldLabel(base, issue.path.slice(0, -1)) : ctx.subject;
    message = `Drop ${describeKey(issue.keys[0]!)}: ${owner} does not take it.`;
  } else if (custom) {
    code = custom;
    // A refinement cannot know where its value sits: `{field}` in its message is filled in here.
    message = clipText(issue.message.replaceAll('{field}', field), 400);
  } else if (issue.code === 'invalid_type' && value === undefined) {
    code = 'MISSING_FIELD';
    message = `Add ${field}: ${ctx.subject} needs it.${expected}`;
  } else if (issue.code === 'too_big' && (issue.origin === 'string' || issue.origin === 'array')) {
    code = 'TOO_LONG';
    const unit = issue.origin === 'string' ? 'characters' : 'items';
    message = `Shorten ${field}: ${ctx.subject} takes at most ${issue.maximum} ${unit}.`;
  } else {
    code = 'INVALID_FIELD';
    message = invalidValue(issue, field, value, hint, ctx);
  }
  return ctx.variant ? { code, path, message, variant: ctx.variant } : { code, path, message };
}

/** The string formats zod checks, in words with an example, where the schema gives none. */
const FORMATS: Readonly<Record<string, FormatWords>> = {
  url: { noun: 'a URL', example: 'https://example.com/' },
  datetime: { noun: 'an ISO 8601 date-time', example: '2026-07-28T09:00:00Z' },
  date: { noun: 'a date', example: '2026-07-28' },
  uuid: { noun: 'a UUID', example: '123e4567-e89b-42d3-a456-426614174000' },
};

/**
 * An invalid value's message: what to use (the field's description and limits, with their
 * example), then what was wrong, in words. zod's own text comes last, and only when nothing
 * better is known.
 */
function invalidValue(
  issue: z.core.$ZodIssue,
  field: string,
  value: unknown,
  hint: string | undefined,
  { subject, formats }: FieldContext,
): string {
  const sent = describeValue(value);
  if (issue.code === 'invalid_value' && issue.values.length) {
    const options = listWords(
      issue.values.map((v) => (typeof v === 'string' ? v : String(JSON.stringify(v)))),
      'or',
    );
    return `Set ${field} to ${options}: ${sent} is not one of them.`;
  }
  if (issue.code === 'invalid_format') {
    const format = issue.format === 'regex' || !Object.hasOwn(formats, issue.format) ? undefined : formats[issue.format];
    if (format) return `Fix ${field}: use ${format.noun}, e.g. ${format.example}; ${sent} is not one.`;
    const pattern = 'pattern' in issue && typeof issue.pattern === 'string' ? issue.pattern : undefined;
    const use = hint ?? (pattern ? `text matching ${pattern}` : `a valid ${issue.format}`);
    return `Fix ${field}: use ${use}; ${sent} ${pattern ? 'does not match' : 'is not one'}.`;
  }
  if (issue.code === 'too_small' || issue.code === 'too_big') {
    const numeric = ['number', 'int', 'bigint'].includes(issue.origin);
    const use =
      hint && !(numeric && /^(greater|less|at least|at most|from)/.test(hint)) ? hint : `${numeric ? 'a number ' : ''}${hint ?? ''}`.trim();
    if (use) return `Fix ${field}: use ${use}; ${sent} is too ${issue.code === 'too_small' ? 'small' : 'big'}.`;
  }
  const problem = clipText(issue.message, 400);
  return hint ? `Fix ${field}: use ${hint}; ${sent} is not valid for ${subject} (${problem}).` : `Fix ${field} for ${subject}: ${problem}.`;
}
