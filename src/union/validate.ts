/**
 * Branch-first validation: read the discriminator, then validate against that variant
 * alone, so every problem is reported in that variant's terms with a fix the caller can
 * apply. Never throws; every rejection carries code, path (a JSON Pointer into the
 * arguments as sent) and message.
 */
import { z } from 'zod';
import type { UnionDef, Variant } from './define.js';
import { listWords } from './describe.js';
import type { ProfileTool } from './profiles.js';

export interface ValidationIssue {
  code: string;
  /** JSON Pointer into the arguments as the client sent them. */
  path: string;
  message: string;
  /** The variant the call was validated against, when known. */
  variant?: string;
}

export type ValidationResult<T = Record<string, unknown>> =
  | { ok: true; variant: string; value: T }
  | { ok: false; issues: [ValidationIssue, ...ValidationIssue[]] };

/**
 * Fields not on the variant get one issue each up to this many; the last one counts the rest.
 * A 1 MiB call can name 100,000 fields, and an issue for each took a second to build and
 * made a reply ten times the request's size.
 */
export const MAX_FOREIGN_ISSUES = 20;

export function pointer(base: string, segments: readonly PropertyKey[]): string {
  return base + segments.map((s) => '/' + String(s).replaceAll('~', '~0').replaceAll('/', '~1')).join('');
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `null` means absent for optional fields (the strict profile sends nulls). */
export function dropNulls(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
}

/** Validates a tools/call's arguments for one profile tool against the union. */
export function validateUnionCall(def: UnionDef, binding: ProfileTool['binding'], raw: unknown): ValidationResult {
  const disc = def.discriminator;
  const noun = def.options.variantNoun;
  let base = '';
  let args: unknown = raw ?? {};
  if (!isRecord(args)) return fail({ code: 'INVALID_FIELD', path: '', message: 'Arguments must be a JSON object.' });

  if (binding.wrapKey) {
    const key = binding.wrapKey;
    const extra = Object.keys(args).filter((k) => k !== key);
    if (extra.length) {
      return fail({ code: 'INVALID_FIELD', path: pointer('', [extra[0]!]), message: `Put every field inside ${key}; drop ${extra[0]} from the top level.` });
    }
    if (!isRecord(args[key])) {
      return fail({ code: 'MISSING_FIELD', path: pointer('', [key]), message: `${key} is required: an object with ${disc} set to ${variantList(def)}.` });
    }
    args = args[key];
    base = pointer('', [key]);
  }
  // One pass over the keys, which a 1 MiB call can have 100,000 of. `null` means absent.
  const fields = args as Record<string, unknown>;
  let tag = fields[disc] ?? undefined;

  if (binding.impliedVariant) {
    const implied = binding.impliedVariant;
    if (tag !== undefined && tag !== implied) {
      return fail({
        code: `INVALID_${disc.toUpperCase()}`,
        path: pointer(base, [disc]),
        message: `This tool always uses ${disc} ${implied}; drop ${disc}, or call ${def.options.variantToolName(String(tag))}.`,
        variant: implied,
      });
    }
    tag = implied;
  }

  const variant = def.variants.find((v) => v.value === tag);
  if (!variant) {
    const what = tag === undefined ? `${disc} is required` : `${disc} ${JSON.stringify(tag)} is not a ${noun}`;
    return fail({ code: `INVALID_${disc.toUpperCase()}`, path: pointer(base, [disc]), message: `${what}: set it to ${variantList(def)}.` });
  }

  const known: Record<string, unknown> = { [disc]: tag };
  const foreign: string[] = [];
  for (const field of Object.keys(fields)) {
    const value = fields[field];
    if (field === disc || value === null) continue;
    if (variant.fields.includes(field)) known[field] = value;
    else foreign.push(field);
  }
  const issues: ValidationIssue[] = [];
  for (const field of foreign.slice(0, MAX_FOREIGN_ISSUES)) {
    issues.push({
      code: `FIELD_NOT_ON_${noun.toUpperCase()}`,
      path: pointer(base, [field]),
      message: notOnVariant(def, variant, field),
      variant: variant.value,
    });
  }
  const unlisted = foreign.length - MAX_FOREIGN_ISSUES;
  if (unlisted > 0) issues.at(-1)!.message += ` ${unlisted} more field${unlisted === 1 ? ' is' : 's are'} not on ${variant.value} either: drop ${unlisted === 1 ? 'it' : 'them'} too.`;
  const parsed = variant.schema.safeParse(known);
  if (!parsed.success) {
    issues.push(...mapZodIssues(parsed.error.issues, known, base, { subject: variant.value, schema: variant.schema, variant: variant.value }));
  }
  if (issues.length) return fail(...(issues as [ValidationIssue, ...ValidationIssue[]]));
  return { ok: true, variant: variant.value, value: parsed.data as Record<string, unknown> };
}

/** Validates the arguments of a plain object tool; same issue shapes as the union's. */
export function validateObject<S extends z.ZodObject>(schema: S, toolName: string, raw: unknown): { ok: true; value: z.infer<S> } | { ok: false; issues: [ValidationIssue, ...ValidationIssue[]] } {
  const args = raw ?? {};
  if (!isRecord(args)) return fail({ code: 'INVALID_FIELD', path: '', message: 'Arguments must be a JSON object.' });
  const call = dropNulls(args);
  const parsed = schema.safeParse(call);
  if (parsed.success) return { ok: true, value: parsed.data };
  return fail(...(mapZodIssues(parsed.error.issues, call, '', { subject: toolName, schema }) as [ValidationIssue, ...ValidationIssue[]]));
}

function fail(...issues: [ValidationIssue, ...ValidationIssue[]]): { ok: false; issues: [ValidationIssue, ...ValidationIssue[]] } {
  return { ok: false, issues };
}

function variantList(def: UnionDef): string {
  return listWords(def.variants.map((v) => v.value), 'or');
}

function notOnVariant(def: UnionDef, variant: Variant, field: string): string {
  const own = variant.fields.filter((f) => !def.commonFields.includes(f));
  const limits = variant.meta.limits ? ` (${variant.meta.limits})` : '';
  const others = def.variants.filter((v) => v.fields.includes(field)).map((v) => v.value);
  const fix = others.length
    ? `Drop ${field}, or set ${def.discriminator} to ${listWords(others, 'or')}.`
    : `Drop ${field}: no ${def.options.variantNoun} takes it.`;
  return `${variant.value} takes ${listWords(own)} only${limits}. ${fix}`;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let node = input;
  for (const seg of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[seg];
  }
  return node;
}

function hintFor(schema: z.ZodObject, path: readonly PropertyKey[]): string | undefined {
  const field = schema.shape[String(path[0])] as z.ZodType | undefined;
  return field?.description;
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

function mapZodIssues(
  zodIssues: z.core.$ZodIssue[],
  input: unknown,
  base: string,
  ctx: { subject: string; schema: z.ZodObject; variant?: string },
): ValidationIssue[] {
  const flat = zodIssues.flatMap(expandIssue);
  return flat.map((issue) => {
    const path = pointer(base, issue.path);
    const field = issue.path.length ? issue.path.map(String).join('.') : 'arguments';
    const hint = issue.path.length ? hintFor(ctx.schema, issue.path) : undefined;
    const expected = hint ? ` Expected ${hint}.` : '';
    let code: string;
    let message: string;
    const custom = issue.code === 'custom' ? (issue.params as { code?: string } | undefined)?.code : undefined;
    if (issue.code === 'unrecognized_keys') {
      code = 'INVALID_FIELD';
      const owner = issue.path.length > 1 ? issue.path.slice(0, -1).map(String).join('.') : ctx.subject;
      message = `${owner} does not take ${issue.keys[0]}; drop it.`;
    } else if (custom) {
      code = custom;
      message = issue.message;
    } else if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined) {
      code = 'MISSING_FIELD';
      message = `${ctx.subject} needs ${field}.${expected}`;
    } else if (issue.code === 'too_big' && (issue.origin === 'string' || issue.origin === 'array')) {
      code = 'TOO_LONG';
      const unit = issue.origin === 'string' ? 'characters' : 'items';
      message = `${field} is too long for ${ctx.subject}: at most ${String(issue.maximum)} ${unit}. Shorten it.`;
    } else {
      code = 'INVALID_FIELD';
      message = `${field} is not valid for ${ctx.subject}: ${issue.message}.${expected}`;
    }
    return ctx.variant ? { code, path, message, variant: ctx.variant } : { code, path, message };
  });
}
