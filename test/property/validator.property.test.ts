/**
 * Property tests of what a client can send. Fixed seed in CI, replayable, optional random
 * exploration (test/helpers/property.ts); the arbitraries put every JSON type, hostile keys
 * (`toString`, `valueOf`, `__proto__`, `constructor`), lone surrogates, huge strings and
 * deep nesting in every position (test/helpers/hostile-json.ts).
 *
 * - The union validator, under every profile: never throws; every rejection has a known
 *   code, a bounded well-formed message and a pointer into the arguments as sent; nothing
 *   accepted holds a lone surrogate.
 * - Every tool of every profile through the catalog, with a real app (dry-run channels,
 *   SQLite): every call ends in a result, a coded error when it fails, of bounded size.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createApp, type App } from '../../src/app.js';
import { channelToolName, notificationDef } from '../../src/channels/send-union.js';
import { loadConfig, PROFILES } from '../../src/config/config.js';
import { ERROR_CODES } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { loneSurrogateAt, MAX_ISSUES, POINTER_KEY_MAX_CHARS, profileTools, unionProfiles, validateUnionCall } from '@notify-mcp/union';
import { tempDataDir } from '../helpers/cli.js';
import { ALL_VALID, VALID_EXAMPLES } from '../helpers/examples.js';
import { hostileArguments } from '../helpers/hostile-json.js';
import { assertProperty } from '../helpers/property.js';

const def = notificationDef(loadConfig({ NOTIFY_DATA_DIR: '/x' }).channels);
// Every channel's fields, from the union: a new channel's are edited too.
const FIELDS = ['via', ...new Set(def.variants.flatMap((v) => v.fields)), 'notification', 'extra/field', 'a~b'];
const UNION_PROFILES = unionProfiles(def);

/**
 * Inputs that failed once; every run checks them first. (Huge inputs are regression tests
 * of their own in test/e2e/hostile-input.test.ts: fast-check would shrink them character by
 * character.)
 */
const REGRESSIONS: unknown[] = [
  // Issue 16, defect 11: per-channel, `via` an object whose toString is not a function.
  JSON.parse('{"via":{"toString":1},"to":"+14155550123","body":"x"}'),
  JSON.parse('{"via":[{"valueOf":1,"toString":1}],"to":"+14155550123","body":"x"}'),
  JSON.parse('{"via":"sms","__proto__":{"toString":1},"to":"+14155550123","body":"x"}'),
  { via: 'sms', to: '+14155550123', body: 'a\ud800' },
];

/** Walks a JSON Pointer through own properties only, as a client would resolve it. */
function resolvePointer(root: unknown, pointer: string): { parentExists: boolean } {
  if (pointer === '') return { parentExists: true };
  const tokens = pointer
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  let node: unknown = root;
  for (const [i, token] of tokens.entries()) {
    if (node === null || typeof node !== 'object') return { parentExists: false };
    if (i === tokens.length - 1) return { parentExists: true };
    if (!Object.hasOwn(node, token)) return { parentExists: false };
    node = (node as Record<string, unknown>)[token];
  }
  return { parentExists: true };
}

function stringsIn(value: unknown): string[] {
  const out: string[] = [];
  const todo = [value];
  while (todo.length) {
    const v = todo.pop();
    if (typeof v === 'string') out.push(v);
    else if (v && typeof v === 'object') todo.push(...Object.values(v));
  }
  return out;
}

describe('validateUnionCall on hostile input', () => {
  for (const profile of UNION_PROFILES) {
    it(`${profile}: never throws; every rejection has a known code, a bounded message and a pointer into the arguments`, async () => {
      const tools = profileTools(def, profile);
      const args = fc.tuple(hostileArguments(ALL_VALID, FIELDS), fc.nat(tools.length - 1), fc.boolean());
      await assertProperty(
        `validator ${profile}`,
        fc.property(args, ([inner, toolIndex, wrap]) => {
          const tool = tools[toolIndex]!;
          const sent = tool.binding.wrapKey && wrap ? { [tool.binding.wrapKey]: inner } : inner;
          const result = validateUnionCall(def, tool.binding, sent);
          if (result.ok) {
            expect(def.variants.map((v) => v.value)).toContain(result.variant);
            for (const s of stringsIn(result.value)) expect(loneSurrogateAt(s)).toBe(-1);
            return;
          }
          expect(result.issues.length).toBeGreaterThan(0);
          expect(result.issues.length).toBeLessThanOrEqual(MAX_ISSUES);
          for (const issue of result.issues) {
            expect(ERROR_CODES).toContain(issue.code);
            expect(issue.message.length).toBeGreaterThan(10);
            expect(issue.message.length).toBeLessThan(1000);
            expect(loneSurrogateAt(issue.message)).toBe(-1);
            expect(issue.path === '' || issue.path.startsWith('/')).toBe(true);
            for (const token of issue.path.split('/')) expect(token.length).toBeLessThanOrEqual(POINTER_KEY_MAX_CHARS + 10);
            expect(resolvePointer(sent ?? {}, issue.path).parentExists, issue.path).toBe(true);
          }
        }),
        { numRuns: 1500, examples: tools.flatMap((_, i) => REGRESSIONS.map((r) => [[r, i, false]] as [[unknown, number, boolean]])) },
      );
    });
  }

  it('accepts every valid example unchanged', () => {
    for (const call of ALL_VALID) expect(validateUnionCall(def, {}, call)).toMatchObject({ ok: true, variant: call.via });
  });
});

/** Valid calls per tool, for edits to start from. */
const VALID_BY_TOOL: Record<string, readonly Record<string, unknown>[]> = {
  send_notification: ALL_VALID,
  ...Object.fromEntries(
    Object.entries(VALID_EXAMPLES).map(([via, calls]) => [channelToolName(via), [...calls, ...calls.map(({ via: _, ...rest }) => rest)]]),
  ),
  show_banner: [
    { text: 'Maintenance at 22:00 UTC', audience: 'all', severity: 'warning', dedupe_key: 'maint' },
    { text: 'Billing export delayed', audience: 'team:billing', expires_at: '2999-01-01T00:00:00Z' },
  ],
  dismiss_banner: [{ banner_id: 'bnr_00000000-0000-4000-8000-000000000000' }],
  list_banners: [{ audience: 'admins', status: 'active' }, {}],
  get_notification: [{ id: 'ntf_0123456789abcdef0123456789abcdef' }],
  edit_notification: [{ id: 'ntf_0123456789abcdef0123456789abcdef', text: 'Deploy finished (edited)' }],
  retract_notification: [{ id: 'ntf_0123456789abcdef0123456789abcdef' }],
};
const TOOL_FIELDS = [...FIELDS, 'severity', 'audience', 'expires_at', 'dedupe_key', 'banner_id', 'status', 'id', 'blocks'];
const VALIDATION_CODES = new Set(['INVALID_VIA', 'MISSING_FIELD', 'FIELD_NOT_ON_CHANNEL', 'INVALID_FIELD', 'TOO_LONG']);

describe('every tool of every profile, through the catalog', () => {
  let app: App;
  beforeAll(async () => {
    app = await createApp(loadConfig({ NOTIFY_DATA_DIR: tempDataDir() }), silentLogger);
  });
  afterAll(async () => {
    await app?.close();
  });

  for (const profile of PROFILES) {
    it(`${profile}: every call ends in a result, coded when it fails, and bounded in size`, async () => {
      const entries = [...app.catalog[profile].entries.values()];
      const outcomes = new Map<string, number>();
      const send = (inner: unknown, wrapKey: string | undefined, wrap: boolean) => (wrapKey && wrap ? { [wrapKey]: inner } : inner);
      const args = fc
        .nat(entries.length - 1)
        .chain((i) => fc.tuple(fc.constant(i), hostileArguments(VALID_BY_TOOL[entries[i]!.tool.name]!, TOOL_FIELDS), fc.boolean()));
      await assertProperty(
        `catalog ${profile}`,
        fc.asyncProperty(args, async ([index, inner, wrap]) => {
          const entry = entries[index]!;
          const wrapKey = entry.tool.name === 'send_notification' && profile === 'nested' ? 'notification' : undefined;
          const result = await entry.call(send(inner, wrapKey, wrap), {
            deps: app,
            store: app.store,
            config: app.config,
            log: silentLogger,
            client: 'property',
            now: app.now,
            signal: new AbortController().signal,
          });
          const text = result.content[0];
          expect(text?.type).toBe('text');
          // Echoes are capped: no input, however large, makes an answer of comparable size.
          expect(JSON.stringify(result).length).toBeLessThan(64 * 1024);
          expect(loneSurrogateAt(JSON.stringify(result.structuredContent))).toBe(-1);
          const code = result.isError ? (result.structuredContent as { error: { code: string } }).error.code : 'ok';
          outcomes.set(`${entry.tool.name} ${code}`, (outcomes.get(`${entry.tool.name} ${code}`) ?? 0) + 1);
          if (result.isError) {
            expect(ERROR_CODES).toContain(code);
            expect(code).not.toBe('INTERNAL_ERROR');
          }
        }),
        // Enough runs that each of the (up to seven) tools gets calls past validation.
        { numRuns: 400, examples: entries.flatMap((_, i) => REGRESSIONS.map((r) => [[i, r, false]] as [[number, unknown, boolean]])) },
      );
      // The inputs reach the handlers too, not only the validator: every tool got calls past validation.
      for (const entry of entries) {
        const passed = [...outcomes].filter(([key]) => key.startsWith(`${entry.tool.name} `) && !VALIDATION_CODES.has(key.split(' ')[1]!));
        expect(passed.length, entry.tool.name).toBeGreaterThan(0);
      }
    });
  }
});
