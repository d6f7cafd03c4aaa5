/**
 * Arbitraries for what a careless or hostile client can put in `arguments`: every JSON
 * type in every position, objects whose keys shadow Object.prototype (`toString`,
 * `valueOf`, `__proto__`, `constructor`) as JSON.parse makes them (own properties),
 * null-prototype objects, lone surrogates, huge strings and keys, numbers JSON.parse turns
 * into Infinity or -0, and nesting deeper than any recursive walk survives.
 */
import fc from 'fast-check';
import { CHANNEL_NAMES } from './examples.js';

/** Names that mean something to Object.prototype, to zod or to a serializer. */
export const PROTO_KEYS = [
  '__proto__',
  'constructor',
  'toString',
  'valueOf',
  'toJSON',
  'hasOwnProperty',
  'isPrototypeOf',
  'then',
  'length',
  'prototype',
];

const HUGE = 'x'.repeat(300_000);
const HUGE_KEY = 'k'.repeat(300_000);

/** Deep enough that JSON.stringify, structuredClone or a recursive walk overflows the stack. */
const DEPTH = 100_000;
function deep(wrap: (inner: unknown) => unknown, label: string): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < DEPTH; i += 1) value = wrap(value);
  // fast-check prints counterexamples recursively; give these a short name instead.
  Object.defineProperty(value, fc.toStringMethod, { value: () => label });
  return value;
}
export const DEEP_ARRAY = deep((inner) => [inner], `<array nested ${DEPTH} deep>`);
export const DEEP_OBJECT = deep((inner) => ({ toString: inner }), `<{toString:…} nested ${DEPTH} deep>`);

const loneSurrogate = fc
  .tuple(fc.string({ maxLength: 5 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 5 }))
  .map(([a, unit, b]) => a + String.fromCharCode(unit) + b);

export const hostileString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  loneSurrogate,
  fc.constantFrom(
    '',
    ...CHANNEL_NAMES,
    'fax',
    '\ud800',
    'a\udfff',
    '\udc00\ud83d',
    '😀'.slice(0, 1),
    '[object Object]',
    HUGE,
    `${HUGE}@example.com`,
    '+1' + '4'.repeat(300),
  ),
);

export const hostileKey = fc.oneof(
  fc.constantFrom(...PROTO_KEYS, HUGE_KEY, '', 'a/b', 'a~b', '\ud800'),
  fc.string({ maxLength: 8 }),
  loneSurrogate,
);

const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.constantFrom(-0, Infinity, -Infinity, 2 ** 53 + 1, 1e21, 5e-324),
);

const leaf = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null), fc.constantFrom(DEEP_ARRAY, DEEP_OBJECT));

/** Any JSON value, hostile at every depth. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>(
  (tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 4 }),
    object: fc.oneof(
      // As JSON.parse builds it: own data properties, even for `__proto__`.
      fc.array(fc.tuple(hostileKey, tie('value')), { maxLength: 4 }).map((entries) => Object.fromEntries(entries)),
      // A hostile toString/valueOf, the shape that crashed the validator once.
      tie('value').map((v) => ({ toString: v, valueOf: v })),
      fc.dictionary(hostileKey, tie('value'), { maxKeys: 3 }),
    ),
  }),
).value;

/** A valid call, then edits that drop fields or set any key to any value. */
export function editedCall(valid: readonly Record<string, unknown>[], fields: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .tuple(
      fc.constantFrom(...valid),
      fc.array(fc.tuple(fc.constantFrom('drop', 'set', 'set'), fc.oneof(fc.constantFrom(...fields), hostileKey), hostileJson), {
        maxLength: 4,
      }),
    )
    .map(([base, edits]) => {
      const entries = new Map(Object.entries(base));
      for (const [op, key, value] of edits) {
        if (op === 'drop') entries.delete(key);
        else entries.set(key, value);
      }
      return Object.fromEntries(entries);
    });
}

/** Whole `arguments`: an edited valid call, any value at all, or nothing. */
export function hostileArguments(valid: readonly Record<string, unknown>[], fields: readonly string[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: editedCall(valid, fields), weight: 6 },
    { arbitrary: hostileJson, weight: 2 },
    { arbitrary: fc.dictionary(fc.constantFrom(...fields, ...PROTO_KEYS), hostileJson), weight: 2 },
    { arbitrary: fc.constant(undefined), weight: 1 },
  );
}
