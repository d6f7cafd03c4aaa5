/**
 * The issues a validation reports: their shape, the bound on how many, and how each names
 * its place in the arguments (a JSON Pointer, and a label for messages).
 */
import { clipText, describeKey, describeValue, ECHO_MAX_CHARS, POINTER_KEY_MAX_CHARS } from './echo.js';

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
export class Issues {
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
export function issuePath(base: string, segments: readonly PropertyKey[]): string {
  const long = segments.findIndex((s) => typeof s === 'string' && s.length > POINTER_KEY_MAX_CHARS);
  return pointer(base, long < 0 ? segments : segments.slice(0, long));
}

/**
 * How a message names a place in the arguments: a top-level field by its name (`to`), a
 * deeper place by the JSON Pointer its issue carries (`/points/1`, `/shape/points/1`);
 * clipped, since a place may be deep and a key long.
 */
export function fieldLabel(base: string, segments: readonly PropertyKey[]): string {
  if (segments.length === 1 && !base) return describeKey(segments[0]!);
  // Clipped, and a lone surrogate in a key shown as U+FFFD: the message itself must be well-formed text.
  const tokens = segments.slice(0, 8).map((s) => (typeof s === 'string' ? clipText(s) : s));
  const label = pointer(base, tokens);
  return segments.length > 8 ? `${label}/…` : label;
}

export function notAnObject(args: unknown): ValidationFailure {
  return fail({ code: 'INVALID_FIELD', path: '', message: `Send the arguments as a JSON object, not ${describeValue(args)}.` });
}

/** A failure found before any field is looked at: one issue. */
export function fail(issue: ValidationIssue): ValidationFailure {
  return { ok: false, issues: [issue], omitted: 0 };
}
