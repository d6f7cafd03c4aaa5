/**
 * Issue 16, defects 10 and 11, where a client meets them: every tool of every profile,
 * through the catalog the server dispatches to, with a real app (dry-run channels, SQLite).
 * Whatever `arguments` hold, the answer is a result, coded when it fails, bounded in size.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp, type App } from '../../src/app.js';
import { buildCatalog } from '../../src/mcp/catalog.js';
import { loadConfig, PROFILES, type Profile } from '../../src/config/config.js';
import { createLogger, silentLogger } from '../../src/core/log.js';
import { selectProfile } from '../../src/mcp/profile-choice.js';
import type { ObjectToolSpec } from '../../src/mcp/tool-kit.js';
import { withErrorShape } from '../../src/mcp/tool-result.js';
import { MAX_ISSUES } from '@notify-mcp/union';
import { tempDataDir } from '../helpers/cli.js';

type Structured = { error: { code: string; path?: string; message: string; via?: string }; issues: unknown[]; issues_omitted?: number };

let app: App;
beforeAll(async () => {
  app = await createApp(loadConfig({ NOTIFY_DATA_DIR: tempDataDir() }), silentLogger);
});
afterAll(async () => {
  await app?.close();
});

function call(profile: Profile, tool: string, args: unknown, log = silentLogger) {
  const entry = app.catalog[profile].entries.get(tool);
  if (!entry) throw new Error(`no ${tool} under ${profile}`);
  return entry.call(args, {
    deps: app,
    store: app.store,
    config: app.config,
    log,
    client: 'hostile',
    now: app.now,
    signal: new AbortController().signal,
  });
}

describe('every tool of every profile', () => {
  it('answers arguments that are not an object with a coded isError result', async () => {
    for (const profile of PROFILES) {
      for (const tool of app.catalog[profile].tools) {
        for (const args of ['text', 42, true, [1, 2], JSON.parse('[{"toString":1}]')]) {
          const result = await call(profile, tool.name, args);
          expect(result.isError, `${profile} ${tool.name}`).toBe(true);
          expect((result.structuredContent as Structured).error).toMatchObject({ code: 'INVALID_FIELD', path: '' });
        }
      }
    }
  });

  it('per-channel: a via whose toString is not a function is INVALID_VIA, not a crash (defect 11)', async () => {
    const result = await call('per-channel', 'send_sms', JSON.parse('{"via":{"toString":1},"to":"+14155550123","body":"x"}'));
    expect(result.isError).toBe(true);
    expect((result.structuredContent as Structured).error).toEqual({
      code: 'INVALID_VIA',
      path: '/via',
      via: 'sms',
      message: 'Drop via: this tool always uses via sms, not an object.',
    });
  });

  it('echoes of client data are capped, so no input makes an answer of its size (defect 10)', async () => {
    const huge = 'x'.repeat(1_000_000);
    for (const [profile, tool, args] of [
      ['flat', 'send_notification', { via: huge }],
      ['nested', 'send_notification', { notification: { via: 'sms', to: '+14155550123', body: 'x', [huge]: 1 } }],
      ['per-channel', 'send_email', { via: huge }],
      ['flat', 'show_banner', { text: 'x', audience: 'all', [huge]: 1 }],
      [
        'flat',
        'send_notification',
        Object.fromEntries([['via', 'sms'], ...Array.from({ length: 10_000 }, (_, i) => [`k${i}`, huge.slice(0, 100)])]),
      ],
    ] as const) {
      const result = await call(profile, tool, args);
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result).length, `${profile} ${tool}`).toBeLessThan(16 * 1024);
    }
  });

  it('reports how many issues were left out', async () => {
    const args = Object.fromEntries([
      ['via', 'sms'],
      ['to', '+14155550123'],
      ['body', 'x'],
      ...Array.from({ length: 50 }, (_, i) => [`k${i}`, 1]),
    ]);
    const structured = (await call('flat', 'send_notification', args)).structuredContent as Structured;
    expect(structured.issues).toHaveLength(MAX_ISSUES);
    expect(structured.issues_omitted).toBe(50 - MAX_ISSUES);
  });

  it('reports a `__proto__` key as an unknown field, at every tool (defect 10)', async () => {
    const sms = JSON.parse('{"via":"sms","to":"+14155550123","body":"x","__proto__":{"toString":1}}');
    expect((await call('flat', 'send_notification', sms)).structuredContent).toMatchObject({
      error: { code: 'FIELD_NOT_ON_CHANNEL', path: '/__proto__', via: 'sms' },
    });
    const nested = JSON.parse('{"notification":{"via":"sms","to":"+14155550123","body":"x","__proto__":1}}');
    expect((await call('nested', 'send_notification', nested)).structuredContent).toMatchObject({
      error: { code: 'FIELD_NOT_ON_CHANNEL', path: '/notification/__proto__' },
    });
    for (const [tool, valid] of [
      ['show_banner', '"text":"x","audience":"all"'],
      ['dismiss_banner', '"banner_id":"bnr_x"'],
      ['list_banners', '"status":"active"'],
    ] as const) {
      const result = await call('flat', tool, JSON.parse(`{${valid},"__proto__":{"x":1}}`));
      expect(result.structuredContent, tool).toMatchObject({
        error: { code: 'INVALID_FIELD', path: '/__proto__', message: `Drop __proto__: ${tool} does not take it.` },
      });
    }
  });

  it('refuses a lone surrogate in every text field, naming the path (defect 10)', async () => {
    const lone = 'Deploy \ud83d done';
    for (const [profile, tool, args, path] of [
      ['flat', 'send_notification', { via: 'email', to: 'ops@example.com', subject: lone, body_html: '<p>x</p>' }, '/subject'],
      ['flat', 'send_notification', { via: 'email', to: 'ops@example.com', subject: 's', body_html: lone }, '/body_html'],
      ['flat', 'send_notification', { via: 'email', to: 'ops@example.com', subject: 's', body_html: 'h', body_text: lone }, '/body_text'],
      ['per-channel', 'send_sms', { to: '+14155550123', body: lone }, '/body'],
      [
        'nested',
        'send_notification',
        { notification: { via: 'slack', channel: '#ops', text: lone, thread: null, idempotency_key: null } },
        '/notification/text',
      ],
      ['oneOf', 'send_notification', { via: 'slack', channel: '#ops', text: 'x', idempotency_key: lone }, '/idempotency_key'],
      ['flat', 'show_banner', { text: lone, audience: 'all' }, '/text'],
      ['flat', 'show_banner', { text: 'x', audience: 'all', dedupe_key: lone }, '/dedupe_key'],
    ] as const) {
      const result = await call(profile, tool, args);
      expect(result.isError, `${tool} ${path}`).toBe(true);
      expect((result.structuredContent as Structured).error).toMatchObject({
        code: 'INVALID_FIELD',
        path,
        message: expect.stringContaining('lone surrogate'),
      });
    }
  });
});

describe('the catalog never rejects', () => {
  it('a tool that throws, even a hostile value, answers INTERNAL_ERROR and logs it', async () => {
    const lines: string[] = [];
    const thrower: ObjectToolSpec = {
      name: 'throws',
      title: 'Throws',
      description: 'Throws what it is given.',
      input: z.object({}),
      outputSchema: withErrorShape({ properties: {}, required: [] }),
      annotations: {},
      handler: async () => {
        throw JSON.parse('{"toString":1,"valueOf":1}');
      },
    };
    const catalog = buildCatalog(app.config, [thrower]);
    const entry = catalog.flat.entries.get('throws')!;
    const log = createLogger('error', (line) => void lines.push(line));
    const result = await entry.call(
      {},
      { deps: app, store: app.store, config: app.config, log, client: null, now: app.now, signal: new AbortController().signal },
    );
    expect(result.isError).toBe(true);
    expect((result.structuredContent as Structured).error.code).toBe('INTERNAL_ERROR');
    expect(lines.join('')).toContain('tool failed unexpectedly');
  });
});

describe('profile choice by client name', () => {
  it('a client named like an Object.prototype member gets the default profile, not a crash', () => {
    const config = loadConfig({ NOTIFY_DATA_DIR: tempDataDir(), NOTIFY_CLIENT_PROFILES: 'ops-agent=oneOf' });
    for (const clientName of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      expect(selectProfile(config, { clientName })).toBe('flat');
    }
    expect(selectProfile(config, { clientName: 'ops-agent' })).toBe('oneOf');
  });
});
