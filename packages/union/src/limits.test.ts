import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineUnion,
  describeUnion,
  describeVariant,
  profileTools,
  UnionDefinitionError,
  validateUnionCall,
  type UnionOptions,
} from './index.js';
import { formatNumber, limitsOf } from './limits.js';
import { toJsonSchema } from './json-schema.js';

const options: UnionOptions = {
  toolName: 'post_update',
  title: 'Post update',
  intro: 'Posts a status update.',
  variantNoun: 'board',
  variantToolName: (v) => `post_${v}`,
  nestedKey: 'update',
};

const phrase = (schema: z.ZodType) => limitsOf(toJsonSchema(schema));

describe('limits generated from the zod checks', () => {
  it('say lengths, counts, ranges and patterns with their example', () => {
    expect(phrase(z.string().max(160))).toBe('at most 160 characters');
    expect(phrase(z.string().min(1).max(40_000))).toBe('1-40,000 characters');
    expect(phrase(z.string().min(1))).toBe('non-empty');
    expect(phrase(z.string().length(6))).toBe('exactly 6 characters');
    expect(phrase(z.array(z.string().max(20)).min(1).max(10))).toBe('1-10 items, each at most 20 characters');
    expect(phrase(z.int().min(1).max(5))).toBe('a whole number from 1 to 5');
    expect(phrase(z.number().positive())).toBe('greater than 0');
    expect(phrase(z.number().min(0).lt(1))).toBe('at least 0 and less than 1');
    expect(phrase(z.int())).toBeUndefined();
    expect(
      phrase(
        z
          .string()
          .regex(/^[A-Z]{2,5}$/)
          .meta({ examples: ['ENG'] }),
      ),
    ).toBe('matching ^[A-Z]{2,5}$, e.g. ENG');
    expect(phrase(z.string().regex(/^[A-Z]+$/))).toBe('matching ^[A-Z]+$');
    expect(phrase(z.union([z.string(), z.array(z.string()).min(1).max(50)]))).toBe('a string or a list of 1-50');
    expect(phrase(z.union([z.email().max(254), z.array(z.email().max(254)).min(1).max(50)]))).toBe(
      'a string or a list of 1-50, each at most 254 characters',
    );
    expect(phrase(z.union([z.string().max(254), z.array(z.string()).max(5), z.number().min(3)]))).toBe(
      'a string of at most 254 characters, or a list of at most 5 items, or a number at least 3',
    );
    expect(phrase(z.string().max(3).optional().nullable())).toBe('at most 3 characters');
    expect(phrase(z.enum(['a', 'b']))).toBeUndefined();
    expect(formatNumber(1_234_567)).toBe('1,234,567');
    expect(formatNumber(-40_000)).toBe('-40,000');
  });

  it('a .max(160) with no hand-written text is stated in the description and in error advice', () => {
    const def = defineUnion(
      z.discriminatedUnion('board', [
        z.object({ board: z.literal('short'), text: z.string().max(160) }).meta({ description: 'A short update.' }),
        z
          .object({ board: z.literal('long'), text: z.string(), tags: z.array(z.string()).max(3).optional() })
          .meta({ description: 'A long one.' }),
      ]),
      options,
    );
    expect(describeUnion(def)).toContain('short: takes text (at most 160 characters). A short update.');
    expect(describeUnion(def)).toContain('long: takes text; optional tags (at most 3 items).');
    // The variant's own tool states it in its schema, so its description does not repeat it.
    expect(describeVariant(def, def.variants[0]!)).toBe('A short update.');
    expect(profileTools(def, 'per-board')[0]!.inputSchema.properties).toMatchObject({ text: { maxLength: 160 } });
    const r = validateUnionCall(def, {}, { board: 'short', text: 'hi', tags: [] });
    expect(!r.ok && r.issues[0].message).toBe('Drop tags, or set board to long: short takes text (at most 160 characters) only.');
  });

  it('a hand-written limit overrides its field, and only its field', () => {
    const def = defineUnion(
      z.discriminatedUnion('board', [
        z
          .object({
            board: z.literal('sms'),
            to: z
              .string()
              .regex(/^\+\d+$/)
              .meta({ examples: ['+15550100'] }),
            body: z.string().max(160),
          })
          .meta({ description: 'x', limits: { body: '160 units of the refinement' } }),
        z.object({ board: z.literal('b'), n: z.number() }).meta({ description: 'y' }),
      ]),
      options,
    );
    expect(def.variants[0]!.limits).toEqual({ to: 'matching ^\\+\\d+$, e.g. +15550100', body: '160 units of the refinement' });
  });

  it('refuses an override of a field the variant lacks, and an example its field refuses', () => {
    const union = (field: z.ZodType, limits?: Record<string, string>) =>
      z.discriminatedUnion('board', [
        z.object({ board: z.literal('a'), f: field }).meta(limits ? { description: 'a', limits } : { description: 'a' }),
        z.object({ board: z.literal('b') }).meta({ description: 'b' }),
      ]);
    expect(() => defineUnion(union(z.string(), { g: 'x' }), options)).toThrow(
      new UnionDefinitionError('variant "a" has limits for "g", which it does not take'),
    );
    expect(() =>
      defineUnion(
        union(
          z
            .string()
            .regex(/^\d+$/)
            .meta({ examples: ['abc'] }),
        ),
        options,
      ),
    ).toThrow('variant "a": the example "abc" of "f" does not pass its own schema');
  });

  it("states a common field's limit once when every variant holds the same one", () => {
    const key = z.string().min(1).max(64).optional();
    const def = defineUnion(
      z.discriminatedUnion('board', [
        z.object({ board: z.literal('a'), x: z.string(), key }).meta({ description: 'A.' }),
        z.object({ board: z.literal('b'), y: z.string(), key }).meta({ description: 'B.' }),
      ]),
      options,
    );
    expect(describeUnion(def)).toMatch(/Every board takes optional key \(1-64 characters\)\.$/);
  });
});
