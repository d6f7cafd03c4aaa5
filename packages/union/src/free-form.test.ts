import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openAiStrictViolations, openObjectPaths } from '../../../test/compat/checkers.js';
import {
  defineUnion,
  profileTools,
  toJsonSchema,
  toStrict,
  UnionDefinitionError,
  validateUnionCall,
  withJsonText,
  type JsonSchema,
  type UnionOptions,
} from './index.js';

const options: UnionOptions = {
  toolName: 'log_event',
  title: 'Log event',
  intro: 'Logs one event.',
  variantNoun: 'sink',
  variantToolName: (v) => `log_${v}`,
  nestedKey: 'event',
};

const sinks = z.discriminatedUnion('sink', [
  z
    .object({
      sink: z.literal('file'),
      line: z.string(),
      fields: z.record(z.string(), z.unknown()).optional().describe('extra structured data'),
      steps: z.array(z.object({ name: z.string(), data: z.looseObject({}) })).optional(),
    })
    .meta({ description: 'To a file.' }),
  z.object({ sink: z.literal('null'), anything: z.unknown() }).meta({ description: 'Nowhere.' }),
]);
const def = defineUnion(sinks, options);
const [nested] = profileTools(def, 'nested');

describe('free-form values under the strict (nested) profile', () => {
  it('are carried as JSON text, and the schema meets strict mode with nothing closed to {}', () => {
    expect(openAiStrictViolations(nested!.inputSchema)).toEqual([]);
    const file = ((nested!.inputSchema.properties as any).event.anyOf as any[])[0].properties;
    expect(file.fields).toEqual({
      anyOf: [{ type: 'string' }, { type: 'null' }],
      description: 'extra structured data (an object as JSON text)',
    });
    expect(nested!.binding).toEqual({ wrapKey: 'event', jsonText: true });
  });

  it('are parsed back before validation, so the union sees what the other profiles send', () => {
    const sent = { event: { sink: 'file', line: 'x', fields: '{"user":"u1","n":2}', steps: [{ name: 'a', data: '{"k":[1]}' }] } };
    expect(validateUnionCall(def, nested!.binding, sent)).toEqual({
      ok: true,
      variant: 'file',
      value: { sink: 'file', line: 'x', fields: { user: 'u1', n: 2 }, steps: [{ name: 'a', data: { k: [1] } }] },
    });
    const [flat] = profileTools(def, 'flat');
    expect(validateUnionCall(def, flat!.binding, { sink: 'file', line: 'x', fields: { user: 'u1', n: 2 } })).toMatchObject({
      ok: true,
      value: { fields: { user: 'u1', n: 2 } },
    });
    expect(validateUnionCall(def, nested!.binding, { event: { sink: 'null', anything: '[1,"a"]' } })).toMatchObject({
      ok: true,
      value: { anything: [1, 'a'] },
    });
  });

  it('text that is not JSON, or JSON of the wrong type, is an INVALID_FIELD at its path, the text clipped', () => {
    const bad = validateUnionCall(def, nested!.binding, { event: { sink: 'file', line: 'x', fields: `{nope ${'x'.repeat(100)}` } });
    expect(!bad.ok && bad.issues).toEqual([
      {
        code: 'INVALID_FIELD',
        path: '/event/fields',
        variant: 'file',
        message: expect.stringMatching(/^fields must be JSON text .*"\{nope x+… \(106 characters\)" is not\.$/),
      },
    ]);
    const list = validateUnionCall(def, nested!.binding, { event: { sink: 'file', line: 'x', fields: '[1]' } });
    expect(!list.ok && list.issues[0]).toMatchObject({
      code: 'INVALID_FIELD',
      path: '/event/fields',
      message: expect.stringContaining('Send /event/fields as an object, not an array of 1 item'),
    });
  });

  it('toStrict refuses to close a free-form value unless told how to carry it', () => {
    const open = toJsonSchema(z.strictObject({ meta: z.record(z.string(), z.string()) }));
    expect(() => toStrict(open)).toThrow(UnionDefinitionError);
    expect(() => toStrict(open)).toThrow(/^\/properties\/meta: strict mode closes every object, so this free-form value would become \{\}/);
    expect(toStrict(toJsonSchema(z.strictObject({ inner: z.object({ a: z.string() }) })))).toBeTruthy();
  });

  it('the strict checker fails on an open object closed to {} (what toStrict did before), and on a typeless value', () => {
    const closedEmpty = {
      type: 'object',
      properties: { meta: { type: 'object', properties: {}, required: [], additionalProperties: false } },
      required: ['meta'],
      additionalProperties: false,
    };
    expect(openAiStrictViolations(closedEmpty)).toEqual([
      '/meta: a closed object with no properties (it can only be {}: an open object closed drops its data)',
    ]);
    expect(openAiStrictViolations({ type: 'object', properties: { x: {} }, required: ['x'], additionalProperties: false })).toEqual([
      '/x: no type (a free-form value strict mode cannot carry)',
    ]);
    expect(openAiStrictViolations({ type: 'object', properties: {}, required: [], additionalProperties: false })).toEqual([]);
  });

  it('refuses a free-form alternative beside a string one: the text would not say which it is', () => {
    const ambiguous = defineUnion(
      z.discriminatedUnion('sink', [
        z.object({ sink: z.literal('a'), v: z.union([z.string(), z.record(z.string(), z.string())]) }).meta({ description: 'A.' }),
        z.object({ sink: z.literal('b') }).meta({ description: 'B.' }),
      ]),
      options,
    );
    expect(() => profileTools(ambiguous, 'nested')).toThrow(/^v: a free-form alternative beside a string one/);
  });
});

describe("free-form values under every profile (freeForm: 'json-text')", () => {
  const everywhere = defineUnion(sinks, { ...options, freeForm: 'json-text' });

  it('leave no open object in any shape, so a client that makes a shape strict itself keeps it strict', () => {
    // A root oneOf has no strict form at all (OpenAI Agents refuses the keyword): its variants are checked.
    const checked = (schema: JsonSchema) => (Array.isArray(schema.oneOf) ? schema.oneOf : schema);
    for (const profile of ['flat', 'oneOf', 'per-sink'] as const) {
      expect(openObjectPaths(profileTools(def, profile).map((t) => checked(t.inputSchema))), `${profile} without the option`).not.toEqual(
        [],
      );
      for (const tool of profileTools(everywhere, profile)) {
        expect(openObjectPaths(checked(tool.inputSchema)), `${profile}/${tool.name}`).toEqual([]);
        expect(tool.binding.jsonText, `${profile}/${tool.name}`).toBe(true);
      }
    }
    const [flat] = profileTools(everywhere, 'flat');
    expect((flat!.inputSchema.properties as any).fields).toEqual({ type: 'string', description: '(an object as JSON text)' });
    expect((flat!.inputSchema.properties as any).steps.items.properties.data).toEqual({
      type: 'string',
      description: '(an object as JSON text)',
    });
  });

  it('are parsed back under each, and a value sent as the object itself is still taken', () => {
    const value = { sink: 'file', line: 'x', fields: { user: 'u1' }, steps: [{ name: 'a', data: { k: 1 } }] };
    const [flat] = profileTools(everywhere, 'flat');
    expect(
      validateUnionCall(everywhere, flat!.binding, { ...value, fields: '{"user":"u1"}', steps: [{ name: 'a', data: '{"k":1}' }] }),
    ).toEqual({ ok: true, variant: 'file', value });
    expect(validateUnionCall(everywhere, flat!.binding, value)).toEqual({ ok: true, variant: 'file', value });
    const perSink = profileTools(everywhere, 'per-sink').find((t) => t.name === 'log_file')!;
    const { sink: _, ...args } = value;
    expect(validateUnionCall(everywhere, perSink.binding, { ...args, fields: '{"user":"u1"}' })).toMatchObject({
      ok: true,
      value: { fields: { user: 'u1' } },
    });
    const bad = validateUnionCall(everywhere, flat!.binding, { ...value, fields: '{nope' });
    expect(!bad.ok && bad.issues[0]).toMatchObject({ code: 'INVALID_FIELD', path: '/fields' });
  });

  it('withJsonText changes only the free-form nodes of a schema of your own', () => {
    const own = toJsonSchema(z.strictObject({ id: z.string().max(9), meta: z.record(z.string(), z.string()).describe('tags') }));
    expect(withJsonText(own)).toEqual({
      ...own,
      properties: {
        id: (own.properties as Record<string, unknown>).id,
        meta: { type: 'string', description: 'tags (an object as JSON text)' },
      },
    });
    expect(openObjectPaths(own)).toEqual(['/properties/meta']);
  });
});
