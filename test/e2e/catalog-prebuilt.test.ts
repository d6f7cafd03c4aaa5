/**
 * The flat tools/list prebuilt by `npm run build` (dist/tools-flat.json) is the one the
 * source generates for the default configuration, is used only where the configuration
 * gives the same key, and is what the built server answers (src/mcp/catalog-prebuilt.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/mcp/catalog.js';
import { generatePrebuiltList, type PrebuiltList } from '../../src/mcp/catalog-prebuilt.js';
import { loadConfig } from '../../src/config/config.js';
import { cliEnv, ROOT, runCli, tempDataDir } from '../helpers/cli.js';
import { connectCli, ERAS, type CliSession } from '../helpers/mcp-cli.js';

const prebuilt = () => JSON.parse(readFileSync(join(ROOT, 'dist/tools-flat.json'), 'utf8')) as PrebuiltList;
const key = (env: Record<string, string>) => loadConfig(env).catalogKey;

describe('prebuilt flat tools/list', () => {
  it('is, byte for byte, the list the source generates for the default configuration', () => {
    const generated = generatePrebuiltList();
    expect(JSON.stringify(prebuilt())).toBe(JSON.stringify(generated));
    expect(JSON.stringify(generated.tools)).toBe(JSON.stringify(buildCatalog(loadConfig({ NOTIFY_DATA_DIR: '/x' })).flat.tools));
  });

  it('is keyed by what the lists are made of: channel variables and NOTIFY_APPROVAL, not the rest', () => {
    const base = key({});
    for (const unrelated of <Record<string, string>[]>[{ NOTIFY_DATA_DIR: '/x' }, { NOTIFY_LOG_LEVEL: 'error' }, { NOTIFY_DEFAULT_PROFILE: 'nested' }, { HOME: '/elsewhere' }]) {
      expect(key(unrelated), JSON.stringify(unrelated)).toBe(base);
    }
    const changing: Record<string, string>[] = [
      { NOTIFY_SMS_MAX_SEGMENTS: '2' },
      { NOTIFY_SLACK_ALLOW: '#ops' },
      { NOTIFY_APPROVAL: 'first-contact' },
      { SLACK_BOT_TOKEN: 'xoxb-1', NOTIFY_SLACK_ALLOW: '#ops' },
    ];
    const keys = changing.map((env) => key(env));
    for (const k of keys) expect(k).not.toBe(base);
    expect(new Set(keys).size).toBe(keys.length);
    // The key matters: such a setting changes the list itself.
    const lists = (env: Record<string, string>) => JSON.stringify(buildCatalog(loadConfig(env)).flat.tools);
    expect(lists({ NOTIFY_SMS_MAX_SEGMENTS: '2' })).not.toBe(lists({}));
  });

  it('a catalog given a prebuilt list serves its tools and still builds real call handlers', async () => {
    const config = loadConfig({ NOTIFY_DATA_DIR: '/x' });
    const list = { ...prebuilt(), tools: prebuilt().tools.map((t) => ({ ...t, description: `prebuilt: ${t.description}` })) };
    const asked: string[] = [];
    const catalog = buildCatalog(config, undefined, undefined, (profile) => (asked.push(profile), profile === 'flat' ? list : undefined));
    expect(catalog.flat.tools[0]!.description).toMatch(/^prebuilt: /);
    expect(catalog.flat.fingerprint).toBe(list.fingerprint);
    expect(catalog.nested.tools[0]!.description).not.toMatch(/^prebuilt: /);
    expect(asked).toEqual(['flat', 'nested']);
    expect([...catalog.flat.entries.keys()]).toEqual(list.tools.map((t) => t.name));
    const result = await catalog.flat.entries.get('send_notification')!.call({ via: 'pager' }, {} as never);
    expect(result).toMatchObject({ isError: true, structuredContent: { error: { code: 'INVALID_VIA' } } });
  });

  describe.each(ERAS)('the built server (%s)', (era) => {
    const sessions: CliSession[] = [];
    afterAll(async () => Promise.all(sessions.map((s) => s.close())));

    it('answers tools/list with the prebuilt list under the default configuration, and builds its own otherwise', async () => {
      const env = cliEnv({ NOTIFY_DATA_DIR: tempDataDir() });
      const s = await connectCli(env, 'prebuilt', era);
      sessions.push(s);
      expect(JSON.stringify((await s.client.listTools()).tools)).toBe(JSON.stringify(prebuilt().tools));

      const other = { ...env, NOTIFY_SMS_MAX_SEGMENTS: '2' };
      const t = await connectCli(other, 'prebuilt', era);
      sessions.push(t);
      const served = (await t.client.listTools()).tools;
      expect(JSON.stringify(served)).not.toBe(JSON.stringify(prebuilt().tools));
      const schema = JSON.parse((await runCli(['schema', '--profile', 'flat'], other)).stdout) as { tools: unknown };
      expect(JSON.stringify(served)).toBe(JSON.stringify(schema.tools));
    });
  });
});
