import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { assertProperty } from '../../test/helpers/property.js';
import { canonicalJson, listFingerprint, schemaHash, semanticSchemaHash } from './index.js';
import type { Tool } from './types.js';

const fixture = JSON.parse(readFileSync(new URL('../../test/fixtures/bundle-create-issue.json', import.meta.url), 'utf8')) as Tool;
const clone = <T>(x: T): T => structuredClone(x);
type Obj = Record<string, any>;

/** The same value with every object's keys inserted in reverse order, at every depth. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).reverse()) out[k] = reverseKeys((value as Obj)[k]);
    return out;
  }
  return value;
}

/** Five drifts a client would notice, all below the root of the input schema. */
const drifts: Record<string, (schema: Obj) => void> = {
  'optional property added': (s) => void (s.properties.milestone = { type: 'integer' }),
  'nested type changed': (s) => void (s.properties.priority.properties.rank = { type: 'string' }),
  'enum value added': (s) => void s.properties.assignee.properties.kind.enum.push('team'),
  'nested property renamed': (s) => {
    const { login, ...rest } = s.properties.assignee.properties;
    s.properties.assignee.properties = { ...rest, username: login };
    s.properties.assignee.required = ['username'];
  },
  'nested required changed': (s) => void s.properties.priority.required.push('rank'),
};

function drifted(name: string): Obj {
  const schema = clone(fixture.inputSchema) as Obj;
  drifts[name]!(schema);
  return schema;
}

describe('schemaHash (re-exported from the union library)', () => {
  it('is 16 hex and ignores key order at every depth', () => {
    const h = schemaHash(fixture);
    expect(h).toMatch(/^[0-9a-f]{16}$/);
    const reordered = reverseKeys(fixture);
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(fixture)); // the reorder is real
    expect(schemaHash(reordered)).toBe(h);
    expect(canonicalJson(reordered)).toBe(canonicalJson(fixture));
  });

  it('ignores key order for arbitrary JSON (property)', async () => {
    await assertProperty(
      'schemaHash ignores key order',
      fc.property(fc.jsonValue(), (v) => {
        expect(schemaHash(reverseKeys(v))).toBe(schemaHash(v));
      }),
      { numRuns: 200 },
    );
  });

  it('keeps array order significant', () => {
    const a = clone(fixture.inputSchema) as Obj;
    const b = clone(fixture.inputSchema) as Obj;
    b.required.reverse();
    expect(schemaHash(a)).not.toBe(schemaHash(b));
  });

  for (const name of Object.keys(drifts)) {
    it(`changes when the schema drifts: ${name}`, () => {
      const after = drifted(name);
      expect(schemaHash(after)).not.toBe(schemaHash(fixture.inputSchema));
      expect(schemaHash({ ...fixture, inputSchema: after })).not.toBe(schemaHash(fixture));
    });
  }

  it('the five drifts differ from each other too', () => {
    const hashes = new Set(Object.keys(drifts).map((n) => schemaHash(drifted(n))));
    hashes.add(schemaHash(fixture.inputSchema));
    expect(hashes.size).toBe(6);
  });
});

describe('the replacer-allowlist form must not be used', () => {
  // `JSON.stringify(x, keysArray)` treats the array as an allowlist of property names at
  // EVERY depth: nested properties whose names are not root keys vanish from the output.
  const naive = (schema: Obj): string => JSON.stringify(schema, Object.keys(schema).sort());

  for (const name of Object.keys(drifts)) {
    it(`collapses the drift "${name}" (so it would miss it)`, () => {
      expect(naive(drifted(name))).toBe(naive(fixture.inputSchema as Obj));
    });
  }

  it('drops the nested properties entirely', () => {
    expect(JSON.parse(naive(fixture.inputSchema as Obj)).properties).toEqual({});
    expect(Object.keys(JSON.parse(canonicalJson(fixture.inputSchema)).properties)).toHaveLength(7);
  });
});

describe('semanticSchemaHash (what drift is judged by)', () => {
  /** The fixture with its arrays-that-are-sets reversed, at the root and nested. */
  function reordered(): Tool {
    const t = clone(fixture) as Obj;
    const s = t.inputSchema;
    s.required.reverse();
    s.properties.priority.properties.level.enum.reverse();
    s.properties.assignee.properties.kind.enum.reverse();
    s.properties.body.type = ['string', 'null'];
    return t as Tool;
  }
  const base = (): Tool => {
    const t = clone(fixture) as Obj;
    t.inputSchema.properties.body.type = ['null', 'string'];
    return t as Tool;
  };

  it('ignores the order of required, enum and type, at every depth; the served bytes still differ', () => {
    expect(semanticSchemaHash(reordered())).toBe(semanticSchemaHash(base()));
    expect(semanticSchemaHash(reordered())).toMatch(/^[0-9a-f]{16}$/);
    expect(schemaHash(reordered())).not.toBe(schemaHash(base()));
    expect(listFingerprint([reordered()])).not.toBe(listFingerprint([base()]));
  });

  it('ignores set order in $defs, items, anyOf branches, outputSchema and dependentRequired too', () => {
    const tool = (flip: boolean): Tool => {
      const order = <T>(xs: T[]): T[] => (flip ? [...xs].reverse() : xs);
      return {
        name: 't',
        inputSchema: {
          type: 'object',
          $defs: { color: { enum: order(['red', 'green', { rgb: [1, 2, 3] }]) } },
          properties: {
            tags: { type: 'array', items: { type: 'object', required: order(['k', 'v']) } },
            pick: { anyOf: [{ type: 'object', required: order(['a', 'b']) }, { type: order(['string', 'integer']) }] },
          },
          dependentRequired: { card: order(['cvv', 'expiry']) },
        },
        outputSchema: { type: 'object', required: order(['id', 'url']) },
      };
    };
    expect(semanticSchemaHash(tool(true))).toBe(semanticSchemaHash(tool(false)));
    expect(schemaHash(tool(true))).not.toBe(schemaHash(tool(false)));
  });

  it('keeps order where it means something: data values, positional items, anyOf alternatives', () => {
    const variants: Record<string, (flip: boolean) => Obj> = {
      default: (f) => ({ type: 'array', default: f ? ['b', 'a'] : ['a', 'b'] }),
      const: (f) => ({ const: f ? [2, 1] : [1, 2] }),
      'enum member': (f) => ({ enum: [f ? [2, 1] : [1, 2]] }),
      examples: (f) => ({ examples: f ? ['y', 'x'] : ['x', 'y'] }),
      prefixItems: (f) => ({ prefixItems: f ? [{ type: 'integer' }, { type: 'string' }] : [{ type: 'string' }, { type: 'integer' }] }),
      anyOf: (f) => ({ anyOf: f ? [{ type: 'integer' }, { type: 'string' }] : [{ type: 'string' }, { type: 'integer' }] }),
      // A property named `required` is data about the schema, not the keyword.
      'property named required': (f) => ({ properties: { required: { type: 'array', default: f ? ['b', 'a'] : ['a', 'b'] } } }),
    };
    for (const [what, make] of Object.entries(variants)) {
      const hash = (f: boolean) => semanticSchemaHash({ name: 't', inputSchema: { type: 'object', properties: { p: make(f) } } });
      expect(hash(true), what).not.toBe(hash(false));
    }
  });

  for (const name of Object.keys(drifts)) {
    it(`changes when the schema drifts: ${name}`, () => {
      expect(semanticSchemaHash({ ...fixture, inputSchema: drifted(name) } as Tool)).not.toBe(semanticSchemaHash(fixture));
    });
  }

  it('changes when the description or annotations change (what the model reads)', () => {
    expect(semanticSchemaHash({ ...fixture, description: 'Other.' })).not.toBe(semanticSchemaHash(fixture));
    expect(semanticSchemaHash({ ...fixture, annotations: { readOnlyHint: true } })).not.toBe(semanticSchemaHash(fixture));
  });

  it('ignores key order (property) and does not mutate its input', () => {
    const before = JSON.stringify(fixture);
    expect(semanticSchemaHash(reverseKeys(fixture) as Tool)).toBe(semanticSchemaHash(fixture));
    semanticSchemaHash(reordered());
    expect(JSON.stringify(fixture)).toBe(before);
  });
});
