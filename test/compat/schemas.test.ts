/**
 * The generated tool lists, per profile: compatibility with each client family's published
 * rules, valid examples accepted by both the union and each profile's JSON Schema, and
 * snapshots that fail when a schema changes unnoticed (update with `npm run vitest -- run -u`).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/mcp/catalog.js';
import { loadConfig, PROFILES } from '../../src/config/config.js';
import { notificationDef } from '../../src/channels/send-union.js';
import { NOTIFICATION_STATES } from '../../src/store/types.js';
import { profileTools, validateUnionCall } from '@notify-mcp/union';
import { anthropicViolations, openAiStrictViolations, openObjectPaths, sep2106Violations, typeArrayPaths } from './checkers.js';
import { ALL_VALID, CHANNEL_NAMES, CHANNEL_TOOLS, VALID_EXAMPLES } from '../helpers/examples.js';

const config = loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' });
const catalog = buildCatalog(config);
const def = notificationDef(config.channels);

export function ajv() {
  const a = new Ajv2020({ strict: false, allErrors: true });
  a.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
  a.addFormat('date-time', true);
  return a;
}

/** The nested shape of a call: every optional present, as null. */
type Schema = { properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; oneOf?: Schema[]; type?: string };
/**
 * A call as a client following `schema` sends it: a free-form value (a Slack block) as JSON
 * text, which every profile carries; with `nulls` (a strict-mode client), every property of
 * every object the schema declares, null where the call has none.
 */
function asSent(value: unknown, schema: Schema | undefined, nulls: boolean): unknown {
  if (value === null || value === undefined || schema === undefined) return value ?? (nulls ? null : undefined);
  const kind = Array.isArray(value) ? 'array' : typeof value === 'object' ? 'object' : undefined;
  const s = schema.anyOf?.find((b) => b.type === kind) ?? schema.anyOf?.find((b) => b.type !== 'null') ?? schema;
  if (s.type === 'string' && typeof value === 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return value.map((v) => asSent(v, s.items, nulls));
  if (typeof value === 'object' && s.properties) {
    const keys = nulls ? Object.keys(s.properties) : Object.keys(value);
    return Object.fromEntries(keys.map((k) => [k, asSent((value as Record<string, unknown>)[k], s.properties![k], nulls)]));
  }
  return value;
}
const fillNulls = (value: unknown, schema: Schema | undefined) => asSent(value, schema, true);
const branchOf = (schema: Schema, via: unknown) => schema.oneOf!.find((b) => (b.properties?.via as { const?: string }).const === via);
function toNested(call: Record<string, unknown>): Record<string, unknown> {
  const send = catalog.nested.tools.find((t) => t.name === 'send_notification')!;
  const branches = (send.inputSchema.properties as Record<string, Schema>).notification!.anyOf!;
  const branch = branches.find((b) => (b.properties?.via as { enum?: string[] }).enum?.[0] === call.via);
  return { notification: fillNulls(call, branch) };
}

describe('tool lists per profile', () => {
  for (const profile of PROFILES) {
    it(`${profile}: snapshot`, async () => {
      const c = catalog[profile];
      const text = JSON.stringify({ fingerprint: c.fingerprint, hashes: c.hashes, tools: c.tools }, null, 2) + '\n';
      await expect(text).toMatchFileSnapshot(`../__toolsnaps__/${profile}.json`);
    });

    it(`${profile}: every tool has root type object, an outputSchema, annotations, and no type arrays`, () => {
      for (const tool of catalog[profile].tools) {
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.outputSchema?.type).toBe('object');
        expect(tool.annotations).toBeDefined();
        expect(typeArrayPaths(tool.inputSchema)).toEqual([]);
      }
    });

    it(`${profile}: no input schema carries \`examples\` (outside Gemini's schema subset); they are said in words`, () => {
      const keys = (v: unknown, at: string): string[] =>
        typeof v !== 'object' || v === null
          ? []
          : Object.entries(v).flatMap(([k, x]) => [
              ...(k === 'examples' && !at.endsWith('/properties') ? [`${at}/${k}`] : []),
              ...keys(x, `${at}/${k}`),
            ]);
      for (const tool of catalog[profile].tools) expect(keys(tool.inputSchema, tool.name), tool.name).toEqual([]);
      const show = catalog[profile].tools.find((t) => t.name === 'show_banner')!;
      expect(JSON.stringify(show.inputSchema)).toContain('(e.g. team:billing)');
    });

    it(`${profile}: deterministic`, () => {
      expect(JSON.stringify(buildCatalog(config)[profile].tools)).toBe(JSON.stringify(catalog[profile].tools));
    });
  }

  it('flat and per-channel leave no open object, so a client that makes them strict itself (OpenAI Agents) keeps them strict', () => {
    for (const profile of ['flat', 'per-channel'] as const) {
      for (const tool of catalog[profile].tools) expect(openObjectPaths(tool.inputSchema), `${profile}/${tool.name}`).toEqual([]);
    }
    const blocks = (catalog.flat.tools[0]!.inputSchema.properties as Record<string, Schema>).blocks!;
    expect(blocks.items).toEqual({ type: 'string', description: '(an object as JSON text)' });
  });

  it('flat and per-channel meet Anthropic rules', () => {
    for (const profile of ['flat', 'per-channel'] as const) {
      for (const tool of catalog[profile].tools) expect(anthropicViolations(tool), `${profile}/${tool.name}`).toEqual([]);
    }
  });

  it('nested meets OpenAI strict mode for every tool, banner tools included', () => {
    for (const tool of catalog.nested.tools) expect(openAiStrictViolations(tool.inputSchema), tool.name).toEqual([]);
  });

  it('oneOf has the SEP-2106 shape', () => {
    const send = catalog.oneOf.tools.find((t) => t.name === 'send_notification')!;
    expect(sep2106Violations(send.inputSchema, 'via')).toEqual([]);
  });

  it('per-channel lists one send tool per channel, in registry order, then get, edit and retract, and the banner tools', () => {
    const names = catalog['per-channel'].tools.map((t) => t.name);
    expect(names).toEqual([
      ...CHANNEL_TOOLS,
      'get_notification',
      'edit_notification',
      'retract_notification',
      'show_banner',
      'dismiss_banner',
      'list_banners',
    ]);
    expect(CHANNEL_TOOLS).toEqual(expect.arrayContaining(['send_email', 'send_sms', 'send_slack']));
  });

  it("every send tool's output schema lists every channel, so a client accepts each channel's result", () => {
    for (const profile of PROFILES) {
      for (const tool of catalog[profile].tools.filter((t) => t.name.startsWith('send_'))) {
        const via = (tool.outputSchema?.properties as Record<string, { enum?: string[] }>).via;
        expect(via?.enum, `${profile}/${tool.name}`).toEqual(CHANNEL_NAMES);
      }
      const get = catalog[profile].tools.find((t) => t.name === 'get_notification')!;
      expect(get.annotations?.readOnlyHint, profile).toBe(true);
      const props = get.outputSchema?.properties as Record<string, { enum?: string[] }>;
      expect(props.via?.enum, profile).toEqual(CHANNEL_NAMES);
      expect(props.status?.enum, profile).toEqual([...NOTIFICATION_STATES]);
    }
  });
});

describe('the checkers are not vacuous', () => {
  it('catch what they check', () => {
    expect(anthropicViolations({ name: 'bad name', inputSchema: { type: 'object', oneOf: [] } })).toHaveLength(2);
    expect(
      openAiStrictViolations({ type: 'object', properties: { a: { type: 'string', maxLength: 3 } }, additionalProperties: false }),
    ).toEqual(expect.arrayContaining(['/a: not required', '/a: keyword maxLength not supported']));
    expect(
      openAiStrictViolations({
        type: 'object',
        properties: { a: { type: 'object', properties: {} } },
        required: ['a'],
        additionalProperties: false,
      }),
    ).toEqual([
      '/a: additionalProperties must be false',
      '/a: a closed object with no properties (it can only be {}: an open object closed drops its data)',
    ]);
    expect(
      sep2106Violations({ type: 'object', oneOf: [{ type: 'object', properties: { via: { type: 'string' } } }, {}] }, 'via').length,
    ).toBeGreaterThan(2);
    expect(typeArrayPaths({ properties: { a: { type: ['string', 'null'] } } })).toEqual(['/properties/a']);
    expect(
      openObjectPaths({
        type: 'object',
        properties: {
          a: { type: 'array', items: { type: 'object', properties: { t: { type: 'string' } }, additionalProperties: {} } },
          b: {},
          c: { type: 'object' },
        },
        additionalProperties: false,
      }),
    ).toEqual(['/properties/a/items', '/properties/b', '/properties/c']);
  });
});

describe('valid examples pass the union and every profile schema, with the same meaning', () => {
  const validators = Object.fromEntries(
    PROFILES.map((p) => [p, new Map(catalog[p].tools.map((t) => [t.name, ajv().compile(t.inputSchema)]))]),
  );

  for (const [via, examples] of Object.entries(VALID_EXAMPLES)) {
    it(via, () => {
      for (const call of examples) {
        const direct = validateUnionCall(def, {}, call);
        expect(direct, JSON.stringify(call).slice(0, 80)).toMatchObject({ ok: true });

        const tool = (profile: (typeof PROFILES)[number], name: string) => catalog[profile].tools.find((t) => t.name === name)!;
        const flat = asSent(call, tool('flat', 'send_notification').inputSchema as Schema, false);
        expect(validators.flat!.get('send_notification')!(flat)).toBe(true);
        const oneOf = asSent(call, branchOf(tool('oneOf', 'send_notification').inputSchema as Schema, via), false);
        expect(validators.oneOf!.get('send_notification')!(oneOf)).toBe(true);
        const { via: _, ...rest } = call;
        const perChannel = asSent(rest, tool('per-channel', `send_${via}`).inputSchema as Schema, false) as Record<string, unknown>;
        expect(validators['per-channel']!.get(`send_${via}`)!(perChannel)).toBe(true);
        // What each profile's client sends means what the call means: the union reads the JSON text back.
        for (const [profile, name, args] of [
          ['flat', 'send_notification', flat],
          ['oneOf', 'send_notification', oneOf],
          ['per-channel', `send_${via}`, perChannel],
        ] as const) {
          const [shaped] = profileTools(def, profile).filter((t) => t.name === name);
          const read = validateUnionCall(def, shaped!.binding, args);
          expect(read.ok && read.value, `${profile}: ${JSON.stringify(args).slice(0, 80)}`).toEqual(direct.ok && direct.value);
        }

        const nested = toNested(call);
        const check = validators.nested!.get('send_notification')!;
        expect(check(nested), JSON.stringify(check.errors)).toBe(true);
        const [nestedTool] = profileTools(def, 'nested');
        const viaNested = validateUnionCall(def, nestedTool!.binding, nested);
        expect(viaNested.ok && viaNested.value).toEqual(direct.ok && direct.value);
      }
    });
  }

  it('the flat merge of `to` admits both an email list and an E.164 number', () => {
    const flat = validators.flat!.get('send_notification')!;
    expect(flat({ via: 'email', to: ['a@example.com'] })).toBe(true);
    expect(flat({ via: 'sms', to: '+14155550123' })).toBe(true);
    expect(flat({ via: 'sms', to: 42 })).toBe(false);
  });

  it('covers every branch', () => {
    expect(Object.keys(VALID_EXAMPLES)).toEqual(def.variants.map((v) => v.value));
    expect(ALL_VALID.length).toBeGreaterThanOrEqual(8);
  });
});
