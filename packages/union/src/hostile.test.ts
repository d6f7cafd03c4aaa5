/**
 * What a hostile client sends, on a union that knows nothing of any server: every input ends
 * in a result, echoes are capped, `__proto__` is a field like any other, and text must be
 * well-formed Unicode.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loneSurrogateAt } from './echo.js';
import {
  defineUnion,
  MAX_ISSUES,
  POINTER_KEY_MAX_CHARS,
  profileTools,
  validateObject,
  validateUnionCall,
  type ValidationFailure,
} from './index.js';

const shape = z.discriminatedUnion('kind', [
  z
    .strictObject({ kind: z.literal('circle'), r: z.number().positive(), label: z.string().max(5).optional() })
    .meta({ description: 'A circle.' }),
  z
    .strictObject({ kind: z.literal('poly'), points: z.array(z.string().min(1).max(3)).min(3).max(5), label: z.string().optional() })
    .meta({ description: 'A polygon.' }),
]);
const def = defineUnion(shape, {
  toolName: 'draw',
  title: 'Draw',
  intro: 'Draws a shape.',
  variantNoun: 'shape',
  variantToolName: (v) => `draw_${v}`,
  nestedKey: 'shape',
});
const [flat] = profileTools(def, 'flat');
const [nested] = profileTools(def, 'nested');
const [perCircle] = profileTools(def, 'per-shape');
const J = (text: string): unknown => JSON.parse(text);

function issues(result: { ok: true } | ValidationFailure) {
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.issues;
}

function nest(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i += 1) value = [value];
  return value;
}

describe('hostile values', () => {
  it('a discriminator whose toString is not a function, under the per-shape profile', () => {
    for (const kind of [J('{"toString":1}'), J('[{"toString":1,"valueOf":1}]'), J('{"__proto__":{"toString":1}}')]) {
      const [issue] = issues(validateUnionCall(def, perCircle!.binding, { kind, r: 1 }));
      expect(issue).toMatchObject({ code: 'INVALID_KIND', path: '/kind', variant: 'circle' });
      expect(issue!.message).toMatch(/^Drop kind: this tool always uses kind circle, not an (object|array of 1 item)\.$/);
    }
    const [other] = issues(validateUnionCall(def, perCircle!.binding, { kind: 'poly', r: 1 }));
    expect(other!.message).toBe('Drop kind, or call draw_poly: this tool always uses kind circle, not "poly".');
  });

  it('a value whose `length` is hostile never reaches a zod length check (zod compares it with >=)', () => {
    const cases = [
      J('{"kind":"circle","r":1,"label":{"length":{"toString":1}}}'),
      { kind: 'circle', r: 1, label: { length: nest(100_000) } },
    ];
    for (const call of cases) {
      expect(issues(validateUnionCall(def, flat!.binding, call))).toEqual([
        {
          code: 'INVALID_FIELD',
          path: '/label',
          variant: 'circle',
          message: 'Send label as a string, not an object. Expected at most 5 characters.',
        },
      ]);
    }
    const points = J('{"kind":"poly","points":["a",{"length":{"valueOf":1}},"c"]}');
    expect(issues(validateUnionCall(def, flat!.binding, points))[0]).toMatchObject({
      path: '/points/1',
      message: 'Send /points/1 as a string, not an object. Expected 3-5 items, each 1-3 characters.',
    });
  });

  it('nesting deeper than the stack, in any position', () => {
    const deep = nest(200_000);
    for (const call of [deep, { kind: deep }, { kind: 'poly', points: deep }, { shape: deep }, { kind: 'circle', r: 1, [`x`]: deep }]) {
      for (const tool of [flat!, nested!, perCircle!]) expect(() => validateUnionCall(def, tool.binding, call)).not.toThrow();
    }
    expect(() => validateObject(z.strictObject({ a: z.string().max(2) }), 'tool', { a: deep })).not.toThrow();
  });

  it('a lone surrogate at the bottom of a deep value in a field that takes anything', () => {
    let value: unknown = 'x\ud800';
    for (let i = 0; i < 200_000; i += 1) value = [value];
    const [issue] = issues(validateObject(z.object({ data: z.unknown() }), 'tool', { data: value }));
    expect(issue).toMatchObject({ code: 'INVALID_FIELD', path: expect.stringMatching(/^\/data(\/0)+$/) });
    expect(issue!.message.length).toBeLessThan(300);
  });

  it('arguments that are not an object are a coded issue at the root', () => {
    for (const args of ['text', 42, true, [1, 2], J('[{"toString":1}]')]) {
      const [issue] = issues(validateUnionCall(def, flat!.binding, args));
      expect(issue).toMatchObject({ code: 'INVALID_FIELD', path: '' });
      expect(issue!.message).toMatch(/^Send the arguments as a JSON object, not /);
    }
    expect(issues(validateObject(z.object({}), 'tool', 'text'))[0]).toMatchObject({ code: 'INVALID_FIELD', path: '' });
  });

  it('the wrapper key of the nested profile holding a non-object says so', () => {
    expect(issues(validateUnionCall(def, nested!.binding, { shape: 'circle' }))[0]).toEqual({
      code: 'INVALID_FIELD',
      path: '/shape',
      message: 'Send shape as an object with kind set to circle or poly, not "circle".',
    });
  });
});

describe('echoes are capped', () => {
  it('an unknown discriminator of any size is clipped', () => {
    const [issue] = issues(validateUnionCall(def, flat!.binding, { kind: 'z'.repeat(1_000_000) }));
    expect(issue!.message.length).toBeLessThan(200);
    expect(issue!.message).toContain('(1000000 characters)');
  });

  it('an unknown key of any size is clipped in the message and left out of the pointer', () => {
    const key = 'k'.repeat(1_000_000);
    const [issue] = issues(validateUnionCall(def, nested!.binding, { shape: { kind: 'circle', r: 1, [key]: 1 } }));
    expect(issue).toMatchObject({ code: 'FIELD_NOT_ON_SHAPE', path: '/shape' });
    expect(issue!.message.length).toBeLessThan(300);
    const short = 'k'.repeat(POINTER_KEY_MAX_CHARS);
    expect(issues(validateUnionCall(def, flat!.binding, { kind: 'circle', r: 1, [short]: 1 }))[0]!.path).toBe(`/${short}`);
    const [banner] = issues(validateObject(z.strictObject({}), 'tool', { [key]: 1 }));
    expect(banner).toMatchObject({ code: 'INVALID_FIELD', path: '' });
    expect(banner!.message.length).toBeLessThan(300);
  });

  it('any number of problems gives at most MAX_ISSUES issues, and says how many were left out', () => {
    const many = 200_000; // more than a function call takes as spread arguments
    const keys = Object.fromEntries([['kind', 'circle'], ['r', 1], ...Array.from({ length: many }, (_, i) => [`extra${i}`, i])]);
    const items = { kind: 'poly', points: Array.from({ length: many }, () => 7) };
    const lone = { kind: 'poly', points: ['a', 'b', 'c', ...Array.from({ length: many }, () => '\ud800')] };
    for (const call of [keys, items, lone]) {
      const result = validateUnionCall(def, flat!.binding, call);
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.issues).toHaveLength(MAX_ISSUES);
      expect(result.omitted).toBe(many - MAX_ISSUES);
    }
    const object = validateObject(z.strictObject({}), 'tool', Object.fromEntries(Array.from({ length: many }, (_, i) => [`k${i}`, i])));
    expect(!object.ok && object.omitted).toBe(many - MAX_ISSUES);
  });
});

describe('keys that shadow Object.prototype', () => {
  it('`__proto__`, as JSON.parse makes it (an own property), is an unknown field like any other', () => {
    for (const key of ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty']) {
      const call = J(`{"kind":"circle","r":1,${JSON.stringify(key)}:{"toString":1}}`);
      expect(issues(validateUnionCall(def, flat!.binding, call))).toEqual([
        {
          code: 'FIELD_NOT_ON_SHAPE',
          path: `/${key}`,
          variant: 'circle',
          message: `Drop ${key}: circle takes r (greater than 0) only. No shape takes ${key}.`,
        },
      ]);
      const inner = J(`{"shape":{"kind":"circle","r":1,${JSON.stringify(key)}:1}}`);
      expect(issues(validateUnionCall(def, nested!.binding, inner))[0]).toMatchObject({ path: `/shape/${key}` });
      expect(issues(validateObject(z.strictObject({ a: z.string() }), 'tool', J(`{"a":"x",${JSON.stringify(key)}:1}`)))).toEqual([
        { code: 'INVALID_FIELD', path: `/${key}`, message: `Drop ${key}: tool does not take it.` },
      ]);
    }
  });

  it('a discriminator named like a prototype member is never found on the prototype', () => {
    expect(issues(validateUnionCall(def, flat!.binding, J('{"constructor":"circle","r":1}')))[0]).toMatchObject({
      code: 'INVALID_KIND',
      path: '/kind',
    });
  });
});

describe('lone surrogates', () => {
  it('in a nested key are shown as U+FFFD in the message, while the path names the key as sent', () => {
    const boxes = defineUnion(
      z.discriminatedUnion('kind', [
        z.strictObject({ kind: z.literal('box'), opts: z.strictObject({ a: z.string() }).optional() }).meta({ description: 'A box.' }),
      ]),
      { toolName: 'box', title: 'Box', intro: 'A box.', variantNoun: 'shape', variantToolName: (v) => `draw_${v}`, nestedKey: 'shape' },
    );
    const [box] = profileTools(boxes, 'flat');
    const found = issues(validateUnionCall(boxes, box!.binding, { kind: 'box', opts: { '\ud800': '\ud800' } }));
    expect(found.map((i) => i.path)).toContain('/opts/\ud800');
    for (const issue of found) expect(loneSurrogateAt(issue.message), issue.message).toBe(-1);
  });

  it('are refused in every text field, at any depth, naming the path', () => {
    expect(issues(validateUnionCall(def, flat!.binding, { kind: 'circle', r: 1, label: 'a\ud800' }))).toEqual([
      {
        code: 'INVALID_FIELD',
        path: '/label',
        variant: 'circle',
        message:
          'Send both halves of the surrogate pair in label, or drop the character: it holds a lone surrogate (U+D800) at character 1, and text must be well-formed Unicode.',
      },
    ]);
    const poly = issues(validateUnionCall(def, nested!.binding, { shape: { kind: 'poly', points: ['a', 'b', '\udc00'] } }));
    expect(poly).toMatchObject([{ code: 'INVALID_FIELD', path: '/shape/points/2' }]);
    expect(issues(validateObject(z.object({ text: z.string() }), 'tool', { text: '\ud83d' }))[0]).toMatchObject({
      code: 'INVALID_FIELD',
      path: '/text',
    });
  });

  it('while whole pairs pass', () => {
    expect(validateUnionCall(def, flat!.binding, { kind: 'circle', r: 1, label: '😀' })).toMatchObject({ ok: true });
  });
});
