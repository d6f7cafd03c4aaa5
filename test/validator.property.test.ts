/**
 * Property tests of branch-first validation: no input makes it throw, every rejection
 * carries a known code, a JSON Pointer and a message, and the pointer leads into the
 * arguments as sent (to the offending value, or to a missing key whose parent exists).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { ERROR_CODES } from '../src/errors.js';
import { notificationDef } from '../src/channels/union.js';
import { profileTools, unionProfiles, validateUnionCall } from '../src/union/index.js';
import { ALL_VALID, CHANNEL_NAMES } from './helpers/examples.js';

const def = notificationDef(loadConfig({ NOTIFY_DATA_DIR: '/x' }).channels);
// Every channel's fields, from the union: a new channel's are edited too.
const FIELDS = ['via', ...new Set(def.variants.flatMap((v) => v.fields)), 'extra/field', 'a~b'];

function resolvePointer(root: unknown, pointer: string): { parentExists: boolean } {
  if (pointer === '') return { parentExists: true };
  const tokens = pointer.slice(1).split('/').map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  let node: unknown = root;
  for (const [i, token] of tokens.entries()) {
    if (node === null || typeof node !== 'object') return { parentExists: false };
    if (i === tokens.length - 1) return { parentExists: true };
    node = (node as Record<string, unknown>)[token];
  }
  return { parentExists: true };
}

/** A valid call, then a few random edits: drop, replace or add fields. */
const mutatedCall = fc
  .tuple(
    fc.constantFrom(...ALL_VALID),
    fc.array(
      fc.tuple(fc.constantFrom('drop', 'set', 'set'), fc.constantFrom(...FIELDS), fc.oneof(fc.jsonValue(), fc.string(), fc.constantFrom(...CHANNEL_NAMES, 'fax', null))),
      { maxLength: 4 },
    ),
  )
  .map(([base, edits]) => {
    const call: Record<string, unknown> = { ...base };
    for (const [op, field, value] of edits) {
      if (op === 'drop') delete call[field];
      else call[field] = value;
    }
    return call;
  });

const anyArgs = fc.oneof(mutatedCall, fc.jsonValue(), fc.dictionary(fc.constantFrom(...FIELDS), fc.jsonValue()), fc.constant(undefined));

const PROFILES = unionProfiles(def);

describe('validateUnionCall', () => {
  for (const profile of PROFILES) {
    it(`${profile}: never throws; every rejection has code, path and message pointing into the arguments`, () => {
      const tools = profileTools(def, profile);
      fc.assert(
        fc.property(anyArgs, fc.nat(tools.length - 1), fc.boolean(), (inner, toolIndex, wrap) => {
          const tool = tools[toolIndex]!;
          const args = tool.binding.wrapKey && wrap ? { [tool.binding.wrapKey]: inner } : inner;
          const result = validateUnionCall(def, tool.binding, args);
          if (result.ok) {
            expect(def.variants.map((v) => v.value)).toContain(result.variant);
            return;
          }
          expect(result.issues.length).toBeGreaterThan(0);
          for (const issue of result.issues) {
            expect(ERROR_CODES).toContain(issue.code);
            expect(issue.message.length).toBeGreaterThan(10);
            expect(issue.path === '' || issue.path.startsWith('/')).toBe(true);
            expect(resolvePointer(args ?? {}, issue.path).parentExists, `${issue.path} in ${JSON.stringify(args)}`).toBe(true);
          }
        }),
        { numRuns: 1500 },
      );
    });
  }

  it('accepts every valid example unchanged', () => {
    for (const call of ALL_VALID) expect(validateUnionCall(def, {}, call)).toMatchObject({ ok: true, variant: call.via });
  });
});
