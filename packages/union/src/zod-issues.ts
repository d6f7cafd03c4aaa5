/**
 * zod's issues in the caller's words: each names its place, says what to use (the field's
 * description, limits and example) and what was wrong.
 */
import type { z } from 'zod';
import type { FormatWords } from './define.js';
import { listWords } from './describe.js';
import { clipText, describeKey, describeValue } from './echo.js';
import { fieldLabel, issuePath, type Issues, type ValidationIssue } from './issues.js';
import { withLimits } from './limits.js';
import { own } from './record.js';

/** Who a field belongs to, and what its messages may quote. */
export interface FieldContext {
  subject: string;
  variant?: string;
  /** Each field's limits in words (./limits.ts). */
  limits: Readonly<Record<string, string>>;
  /** String formats in words, for advice (UnionOptions.formats over FORMATS). */
  formats: Readonly<Record<string, FormatWords>>;
}

export type IssueContext = FieldContext & { schema: z.ZodObject };

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let node = input;
  for (const seg of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = own(node, seg);
  }
  return node;
}

/** What a field expects: its description, and its limits where the description does not say them. */
export function hintFor(schema: z.ZodObject, path: readonly PropertyKey[], limits: Readonly<Record<string, string>>): string | undefined {
  const key = path[0];
  if (typeof key !== 'string' || !Object.hasOwn(schema.shape, key)) return undefined;
  const described = (schema.shape[key] as z.ZodType).description;
  const limit = Object.hasOwn(limits, key) ? limits[key] : undefined;
  if (described && limit) return withLimits(described, limit);
  return described ?? (limit?.startsWith('matching') ? `text ${limit}` : limit);
}

/**
 * One issue per unknown key, each pointing at the key itself; and a union whose value
 * matched one alternative's type reports that alternative's problem (a list over its
 * bound says its item limit, not "invalid input").
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

export function addZodIssues(zodIssues: z.core.$ZodIssue[], input: unknown, base: string, ctx: IssueContext, found: Issues): void {
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
export const FORMATS: Readonly<Record<string, FormatWords>> = {
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
