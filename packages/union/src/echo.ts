/**
 * Client data in messages: bounded, well-formed, and never coerced through the value, since
 * parsed JSON may carry `toString` or `__proto__` keys, nest deeper than the stack, or hold
 * huge or lone-surrogate strings. Every message that names a client's value or key comes here.
 */

/** Longest run of client text a message repeats. */
export const ECHO_MAX_CHARS = 40;

/** Keys longer than this are named in messages only, never in a JSON Pointer (see `issuePointer`). */
export const POINTER_KEY_MAX_CHARS = 256;

const LONE_SURROGATE = /\p{Surrogate}/u;
const LONE_SURROGATES = /\p{Surrogate}/gu;
const PLAIN_KEY = /^[A-Za-z0-9_.:-]+$/;

/** Index of the first UTF-16 code unit that is half of no pair, or -1. */
export function loneSurrogateAt(text: string): number {
  return LONE_SURROGATE.exec(text)?.index ?? -1;
}

/** `text` cut to `max` characters (never inside a pair), lone surrogates shown as U+FFFD. */
export function clipText(text: string, max = ECHO_MAX_CHARS): string {
  if (text.length <= max) return text.replace(LONE_SURROGATES, '\uFFFD');
  let head = text.slice(0, max);
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  return `${head.replace(LONE_SURROGATES, '\uFFFD')}… (${text.length} characters)`;
}

/**
 * A client value in a message: strings quoted and clipped, other primitives as JSON would
 * write them, containers by kind and size only.
 */
export function describeValue(value: unknown, max = ECHO_MAX_CHARS): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(clipText(value, max));
    case 'number':
    case 'boolean':
    case 'bigint':
      return `${value}`;
    case 'undefined':
      return 'nothing';
    case 'object':
      if (value === null) return 'null';
      if (Array.isArray(value)) return value.length === 1 ? 'an array of 1 item' : `an array of ${value.length} items`;
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}

/** A key the client sent, as a message names it: bare when plain, else quoted; clipped. */
export function describeKey(key: PropertyKey): string {
  if (typeof key === 'number') return `${key}`;
  if (typeof key === 'symbol') return 'a symbol';
  return PLAIN_KEY.test(key) && key.length <= ECHO_MAX_CHARS ? key : JSON.stringify(clipText(key));
}
