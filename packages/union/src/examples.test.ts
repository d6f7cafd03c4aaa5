import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineUnion } from './define.js';
import { foldExamples } from './examples.js';
import { profileTools } from './profiles.js';

const hasExamples = (v: unknown): boolean =>
  typeof v === 'object' &&
  v !== null &&
  (Array.isArray(v) ? v.some(hasExamples) : Object.entries(v).some(([k, x]) => k === 'examples' || hasExamples(x)));

describe('foldExamples', () => {
  it('says each example in its description, at any depth, and leaves the input as it was', () => {
    const schema = {
      type: 'object',
      properties: {
        to: { type: 'string', description: 'E.164 number', examples: ['+14155550123'] },
        tags: { type: 'array', items: { type: 'string', examples: ['ops'] } },
        when: { anyOf: [{ type: 'string', examples: [{ at: 1 }] }, { type: 'null' }] },
        examples: { type: 'string', description: 'a field named examples stays' },
      },
    };
    const before = JSON.stringify(schema);
    const folded = foldExamples(schema) as any;
    expect(JSON.stringify(schema)).toBe(before);
    expect(folded.properties.to).toEqual({ type: 'string', description: 'E.164 number (e.g. +14155550123)' });
    expect(folded.properties.tags.items).toEqual({ type: 'string', description: '(e.g. ops)' });
    expect(folded.properties.when.anyOf[0]).toEqual({ type: 'string', description: '(e.g. {"at":1})' });
    expect(folded.properties.examples).toEqual({ type: 'string', description: 'a field named examples stays' });
  });

  it('leaves values alone: a const or enum holding an object named examples', () => {
    const schema = { const: { examples: [1] }, enum: [{ examples: [2] }] };
    expect(foldExamples(schema)).toEqual(schema);
  });

  it('leaves out an example the text given says already', () => {
    const schema = { type: 'string', description: 'E.164 number', examples: ['+14155550123'] };
    expect(foldExamples(schema, 'takes to (e.g. +14155550123)')).toEqual({ type: 'string', description: 'E.164 number' });
    expect(foldExamples(schema, 'takes to')).toEqual({ type: 'string', description: 'E.164 number (e.g. +14155550123)' });
  });

  it('leaves no examples in the oneOf and per-variant schemas, and every example said once', () => {
    const def = defineUnion(
      z.discriminatedUnion('via', [
        z
          .object({
            via: z.literal('sms'),
            to: z
              .string()
              .regex(/^\+\d+$/)
              .meta({ description: 'E.164 number', examples: ['+14155550123'] }),
          })
          .meta({ description: 'A text.' }),
        z.object({ via: z.literal('slack'), channel: z.string().meta({ examples: ['C0123ABCD'] }) }).meta({ description: 'A post.' }),
      ]),
      {
        toolName: 'send',
        title: 'Send',
        intro: 'Sends one message.',
        variantNoun: 'channel',
        variantToolName: (v) => `send_${v}`,
        nestedKey: 'message',
      },
    );
    for (const profile of ['oneOf', 'per-channel'] as const) {
      const tools = profileTools(def, profile);
      expect(hasExamples(tools.map((t) => t.inputSchema)), profile).toBe(false);
      const all = JSON.stringify(tools.map((t) => [t.description, t.inputSchema]));
      // A pattern's example is in the tool description; one without a pattern in its field's.
      for (const example of ['e.g. +14155550123', 'e.g. C0123ABCD']) expect(all.split(example).length - 1, `${profile} ${example}`).toBe(1);
      expect(JSON.stringify(tools.map((t) => t.inputSchema)), profile).toContain('"description":"(e.g. C0123ABCD)"');
    }
  });
});
