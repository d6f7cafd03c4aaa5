import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  defineUnion,
  profileTools,
  unionProfiles,
  validateUnionCall,
  describeUnion,
  UnionDefinitionError,
  MANY_VARIANTS,
} from './index.js';

// A union that has nothing to do with notifications: the library must not care.
const shape = z.discriminatedUnion('kind', [
  z
    .object({ kind: z.literal('circle'), r: z.number().positive(), label: z.string().max(5).optional() })
    .meta({ description: 'A circle.', limits: 'r > 0' }),
  z.object({ kind: z.literal('rect'), w: z.number(), h: z.number(), label: z.string().optional() }).meta({ description: 'A rectangle.' }),
]);
const def = defineUnion(shape, {
  toolName: 'draw',
  title: 'Draw',
  intro: 'Draws a shape.',
  variantNoun: 'shape',
  variantToolName: (v) => `draw_${v}`,
  nestedKey: 'shape',
});

describe('union library on a foreign union', () => {
  it('derives codes from the discriminator and the variant noun', () => {
    const r = validateUnionCall(def, {}, { kind: 'circle', r: 1, w: 2 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues[0]).toEqual({
      code: 'FIELD_NOT_ON_SHAPE',
      path: '/w',
      variant: 'circle',
      message: 'Drop w, or set kind to rect: circle takes r only (r > 0).',
    });
    const bad = validateUnionCall(def, {}, { kind: 'hexagon' });
    expect(!bad.ok && bad.issues[0].code).toBe('INVALID_KIND');
  });

  it('merges a shared field whose rules differ into an anyOf that admits both', () => {
    const [flat] = profileTools(def, 'flat');
    const label = (flat!.inputSchema.properties as Record<string, unknown>).label as { anyOf: unknown[] };
    expect(label.anyOf).toHaveLength(2);
  });

  it('lists the variants in the description, one sentence each', () => {
    expect(describeUnion(def)).toBe(
      'Draws a shape. Set kind to circle or rect. circle: takes r (r > 0). A circle. rect: takes w and h. A rectangle. Every shape takes optional label.',
    );
  });

  it("says each field's words once: in the flat description, and in the other shapes' schemas", () => {
    const tagged = defineUnion(
      z.discriminatedUnion('kind', [
        z
          .object({
            kind: z.literal('tag'),
            code: z
              .string()
              .regex(/^[A-Z]{3}$/)
              .meta({ description: 'airport code', examples: ['LHR'] }),
            note: z.string().min(1).max(9),
          })
          .meta({ description: 'A tag.' }),
        z
          .object({
            kind: z.literal('pin'),
            at: z
              .string()
              .regex(/^\d+$/)
              .meta({ examples: ['42'] }),
          })
          .meta({ description: 'A pin.' }),
      ]),
      {
        toolName: 'mark',
        title: 'Mark',
        intro: 'Marks a map.',
        variantNoun: 'mark',
        variantToolName: (v) => `mark_${v}`,
        nestedKey: 'mark',
      },
    );
    const [flat] = profileTools(tagged, 'flat');
    // A field's words and example are said in the description; its limits are the flat schema's
    // keywords (each field here has one rule), so they are not said twice.
    expect(flat!.description).toBe(
      'Marks a map. Set kind to tag or pin. tag: takes code (airport code, e.g. LHR) and note. A tag. pin: takes at (e.g. 42). A pin.',
    );
    expect(JSON.stringify(flat!.inputSchema)).not.toMatch(/description|examples/);
    const props = flat!.inputSchema.properties as Record<string, { pattern?: string; maxLength?: number }>;
    expect([props.code!.pattern, props.at!.pattern, props.note!.maxLength]).toEqual(['^[A-Z]{3}$', '^\\d+$', 9]);
    const [oneOf] = profileTools(tagged, 'oneOf');
    expect(oneOf!.description).toContain('tag: takes code (e.g. LHR) and note (1-9 characters).');
    expect(JSON.stringify(oneOf!.inputSchema)).toContain('"description":"airport code"');
    // Error advice still quotes the whole limit.
    const r = validateUnionCall(tagged, {}, { kind: 'pin', at: '1', note: 'x' });
    expect(!r.ok && r.issues[0]!.message).toBe('Drop note, or set kind to tag: pin takes at (matching ^\\d+$, e.g. 42) only.');
  });

  it('says in the flat description the limits its schema cannot say for a variant: a field merged from different rules, a hand-written one', () => {
    const boards = defineUnion(
      z.discriminatedUnion('kind', [
        z
          .object({ kind: z.literal('short'), text: z.string().max(160), key: z.string().max(9).optional() })
          .meta({ description: 'A short one.' }),
        z
          .object({ kind: z.literal('long'), text: z.string().max(4000), key: z.string().max(9).optional() })
          .meta({ description: 'A long one.', limits: { key: 'nine letters' } }),
      ]),
      { toolName: 'post', title: 'Post', intro: 'Posts.', variantNoun: 'board', variantToolName: (v) => `post_${v}`, nestedKey: 'post' },
    );
    const [flat] = profileTools(boards, 'flat');
    expect(flat!.description).toBe(
      'Posts. Set kind to short or long. short: takes text (at most 160 characters); optional key. A short one. long: takes text (at most 4,000 characters); optional key (nine letters). A long one.',
    );
    expect((flat!.inputSchema.properties as Record<string, unknown>).text).toEqual({
      anyOf: [
        { type: 'string', maxLength: 160 },
        { type: 'string', maxLength: 4000 },
      ],
    });
  });

  it('per-shape tools (one per variant, named for the noun) imply the discriminator and refuse a different one', () => {
    expect(unionProfiles(def)).toEqual(['flat', 'nested', 'oneOf', 'per-shape']);
    expect(() => profileTools(def, 'per-variant')).toThrow(
      '"per-variant" is not a profile of this union; its profiles are flat, nested, oneOf, per-shape',
    );
    const tools = profileTools(def, 'per-shape');
    expect(tools.map((t) => t.name)).toEqual(['draw_circle', 'draw_rect']);
    expect(validateUnionCall(def, tools[1]!.binding, { w: 1, h: 2 })).toMatchObject({ ok: true, variant: 'rect' });
    const wrong = validateUnionCall(def, tools[1]!.binding, { kind: 'circle', w: 1, h: 2 });
    expect(!wrong.ok && wrong.issues[0]).toMatchObject({ code: 'INVALID_KIND', path: '/kind' });
  });

  it('nested paths point into the wrapper as sent, and null means absent', () => {
    const [nested] = profileTools(def, 'nested');
    const r = validateUnionCall(def, nested!.binding, { shape: { kind: 'circle', r: -1, label: null } });
    expect(!r.ok && r.issues[0]).toMatchObject({ code: 'INVALID_FIELD', path: '/shape/r' });
    expect(validateUnionCall(def, nested!.binding, { shape: { kind: 'circle', r: 2, label: null } })).toMatchObject({
      ok: true,
      value: { kind: 'circle', r: 2 },
    });
  });

  it('escapes JSON Pointer tokens', () => {
    const r = validateUnionCall(def, {}, { kind: 'rect', w: 1, h: 1, 'a/b~c': 1 });
    expect(!r.ok && r.issues[0].path).toBe('/a~1b~0c');
  });

  it('refuses a union whose variants lack a description', () => {
    const bare = z.discriminatedUnion('k', [z.object({ k: z.literal('a') }), z.object({ k: z.literal('b') })]);
    expect(() => defineUnion(bare, def.options)).toThrow(UnionDefinitionError);
  });
});

describe('a union past MANY_VARIANTS variants', () => {
  const many = (n: number) =>
    z.discriminatedUnion(
      'kind',
      Array.from({ length: n }, (_, i) => z.object({ kind: z.literal(`k${i}`), x: z.string() }).meta({ description: `K${i}.` })) as [
        z.ZodObject<{ kind: z.ZodLiteral<string>; x: z.ZodString }>,
        ...z.ZodObject<{ kind: z.ZodLiteral<string>; x: z.ZodString }>[],
      ],
    );

  it('warns through the hook, naming the count; up to the limit it is silent', () => {
    const warnings: string[] = [];
    defineUnion(many(MANY_VARIANTS), { ...def.options, onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([]);
    defineUnion(many(MANY_VARIANTS + 1), { ...def.options, onWarning: (m) => warnings.push(m) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^draw has 9 variants \(kind\): past about 8, /);
    expect(warnings[0]).toContain('per-shape profile');
  });

  it('by default emits a process warning (stderr), never writes to stdout', () => {
    const emit = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const write = vi.spyOn(process.stdout, 'write');
    try {
      defineUnion(many(12), def.options);
      expect(emit).toHaveBeenCalledWith(expect.stringContaining('draw has 12 variants'), { code: 'UNION_MANY_VARIANTS' });
      expect(write).not.toHaveBeenCalled();
    } finally {
      emit.mockRestore();
      write.mockRestore();
    }
  });
});
