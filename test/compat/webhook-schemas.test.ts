/**
 * The webhook branch under every profile, with targets configured (the toolsnaps hold the
 * default configuration, where it is absent): each client family's rules, and the channel's
 * examples accepted by each profile's schema and read back by the union with their meaning.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/mcp/catalog.js';
import { loadConfig } from '../../src/config/config.js';
import { notificationDef } from '../../src/channels/send-union.js';
import { CHANNELS } from '../../src/channels/registry.js';
import { profileTools, validateUnionCall } from '@notify-mcp/union';
import { anthropicViolations, openAiStrictViolations, openObjectPaths, sep2106Violations } from './checkers.js';

const config = loadConfig({
  NOTIFY_DATA_DIR: '/nonexistent',
  NOTIFY_WEBHOOKS: 'alerts=standard:https://hooks.example.com/n,ops=discord:https://discord.com/api/webhooks/1/a',
  NOTIFY_WEBHOOK_SECRET_ALERTS: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  NOTIFY_WEBHOOK_ALLOW: '*',
});
const catalog = buildCatalog(config);
const def = notificationDef(config.channels);
const examples = CHANNELS.find((c) => c.name === 'webhook')!.examples;
const compile = (schema: object) =>
  new Ajv2020({ strict: false, allErrors: true }).addFormat('email', true).addFormat('date-time', true).compile(schema);
const tool = (profile: keyof typeof catalog, name: string) => catalog[profile].tools.find((t) => t.name === name)!;

type Schema = { properties?: Record<string, Schema>; anyOf?: Schema[] };
/** A strict-mode client's call: every property the branch declares, null where the call has none. */
const withNulls = (call: Record<string, unknown>, branch: Schema) =>
  Object.fromEntries(Object.keys(branch.properties!).map((k) => [k, call[k] ?? null]));

describe('webhook branch under every profile', () => {
  it("meets each client family's rules", () => {
    for (const profile of ['flat', 'per-channel'] as const) {
      for (const t of catalog[profile].tools) {
        expect(openObjectPaths(t.inputSchema), `${profile}/${t.name}`).toEqual([]);
        expect(anthropicViolations(t), `${profile}/${t.name}`).toEqual([]);
      }
    }
    for (const t of catalog.nested.tools) expect(openAiStrictViolations(t.inputSchema), t.name).toEqual([]);
    expect(sep2106Violations(tool('oneOf', 'send_notification').inputSchema, 'via')).toEqual([]);
    expect(catalog['per-channel'].tools.map((t) => t.name)).toContain('send_webhook');
  });

  it('takes its examples in every profile, with the same meaning', () => {
    for (const call of examples) {
      const direct = validateUnionCall(def, {}, call);
      expect(direct).toMatchObject({ ok: true });
      const { via: _via, ...rest } = call;
      const branches = (tool('nested', 'send_notification').inputSchema.properties as Record<string, Schema>).notification!.anyOf!;
      const branch = branches.find((b) => (b.properties!.via as { enum?: string[] }).enum?.[0] === 'webhook')!;
      for (const [profile, name, args] of [
        ['flat', 'send_notification', call],
        ['oneOf', 'send_notification', call],
        ['per-channel', 'send_webhook', rest],
        ['nested', 'send_notification', { notification: withNulls(call, branch) }],
      ] as const) {
        const check = compile(tool(profile, name).inputSchema);
        expect(check(args), `${profile}: ${JSON.stringify(check.errors)}`).toBe(true);
        const [shaped] = profileTools(def, profile).filter((t) => t.name === name);
        const read = validateUnionCall(def, shaped!.binding, args);
        expect(read.ok && read.value, profile).toEqual(direct.ok && direct.value);
      }
    }
  });
});
