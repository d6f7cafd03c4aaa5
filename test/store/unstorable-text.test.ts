/**
 * Text a store cannot keep (U+0000, unpaired surrogates) in any tool's arguments or in the
 * client name is refused with a coded INVALID_FIELD before any handler runs: no provider
 * call, no record, the same answer on SQLite and PostgreSQL (a fresh schema; required when
 * DATABASE_URL is set). A live Slack send is the one that went out unrecorded before.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig, type Profile } from '../../src/config/config.js';
import { silentLogger } from '../../src/core/log.js';
import { tempDataDir } from '../helpers/cli.js';
import { postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';

const pgSkip = await postgresSkipReason('unstorable-text');

let slack: Server;
let slackUrl: string;
let posts = 0;
beforeAll(async () => {
  slack = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.includes('chat.postMessage')) posts += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, channel: 'C0123ABCD', ts: `1712345678.${String(posts).padStart(6, '0')}` }));
    });
  });
  await new Promise<void>((r) => slack.listen(0, '127.0.0.1', r));
  slackUrl = `http://127.0.0.1:${(slack.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => slack.close(r));
});

const SLACK = { via: 'slack', channel: 'C0123ABCD', text: 'Deploy done' };
const NUL = '\u0000';
const LONE_HIGH = '\uD83D';
const LONE_LOW = '\uDE00';

/** [profile, tool, arguments, client, the path expected (null: the client name)] */
const CASES: [Profile, string, unknown, string, string | null][] = [
  ['flat', 'send_notification', { ...SLACK, idempotency_key: `deploy${NUL}-42` }, 'bot', '/idempotency_key'],
  ['flat', 'send_notification', { ...SLACK, text: `Deploy${NUL}done` }, 'bot', '/text'],
  ['flat', 'send_notification', { ...SLACK, text: `Deploy ${LONE_HIGH} done` }, 'bot', '/text'],
  ['flat', 'send_notification', { ...SLACK, text: `${LONE_LOW}Deploy` }, 'bot', '/text'],
  [
    'flat',
    'send_notification',
    { ...SLACK, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: `a${NUL}` } }] },
    'bot',
    '/blocks/0/text/text',
  ],
  ['flat', 'send_notification', { ...SLACK, [`x${NUL}`]: 1 }, 'bot', `/x${NUL}`],
  ['flat', 'send_notification', SLACK, `bot${NUL}x`, null],
  ['flat', 'send_notification', SLACK, `bot${LONE_HIGH}`, null],
  [
    'nested',
    'send_notification',
    { notification: { ...SLACK, thread: null, blocks: null, idempotency_key: `k${NUL}` } },
    'bot',
    '/notification/idempotency_key',
  ],
  ['per-channel', 'send_slack', { channel: 'C0123ABCD', text: `a/b~${NUL}` }, 'bot', '/text'],
  ['flat', 'get_notification', { id: `ntf_${NUL}` }, 'bot', '/id'],
  ['flat', 'show_banner', { text: `maintenance${NUL}tonight`, audience: 'all' }, 'bot', '/text'],
  ['flat', 'show_banner', { text: 'maintenance', audience: `all${NUL}` }, 'bot', '/audience'],
  ['flat', 'show_banner', { text: 'maintenance', audience: 'all', dedupe_key: `m${LONE_LOW}` }, 'bot', '/dedupe_key'],
  ['flat', 'dismiss_banner', { id: `bnr_${NUL}` }, 'bot', '/id'],
];

async function check(app: App) {
  const before = posts;
  for (const [profile, tool, args, client, path] of CASES) {
    const entry = app.catalog[profile].entries.get(tool)!;
    const result = await entry.call(args, {
      deps: app,
      store: app.store,
      config: app.config,
      log: silentLogger,
      client,
      now: app.now,
      signal: new AbortController().signal,
    });
    const where = `${profile} ${tool} ${JSON.stringify(args)} as ${JSON.stringify(client)}`;
    expect(result.isError, where).toBe(true);
    const error = (result.structuredContent as { error: { code: string; path?: string; message: string } }).error;
    expect(error.code, `${where}: ${error.message}`).toBe('INVALID_FIELD');
    if (path === null) {
      expect(error.path, where).toBeUndefined();
      expect(error.message, where).toMatch(/client name/);
    } else expect(error.path, where).toBe(path);
  }
  expect(posts - before).toBe(0);
  expect(await app.store.listDeliveries(100)).toEqual([]);
  expect(await app.store.listBanners({ now: app.now() })).toEqual([]);
  // The same calls without the text are served: the screen refuses only what cannot be stored.
  const entry = app.catalog.flat.entries.get('send_notification')!;
  const ok = await entry.call(
    { ...SLACK, idempotency_key: 'deploy-42' },
    {
      deps: app,
      store: app.store,
      config: app.config,
      log: silentLogger,
      client: 'bot',
      now: app.now,
      signal: new AbortController().signal,
    },
  );
  expect(ok.structuredContent).toMatchObject({ status: 'sent' });
  expect(posts - before).toBe(1);
}

const env = () => ({
  NOTIFY_DATA_DIR: tempDataDir('notify-nul-'),
  SLACK_BOT_TOKEN: 'xoxb-test',
  SLACK_API_URL: slackUrl,
  NOTIFY_SLACK_ALLOW: '*',
});

describe('text a store cannot keep', () => {
  it('SQLite: refused before any handler, with the path of the field', async () => {
    const app = await createApp(loadConfig(env()), silentLogger);
    try {
      await check(app);
    } finally {
      await app.close();
    }
  });

  it.skipIf(pgSkip !== null)(
    `PostgreSQL: refused before any handler, with the path of the field${pgSkip ? ` [skipped: ${pgSkip}]` : ''}`,
    async () => {
      const schema = await sharedPostgresSchema('notify_nul');
      const app = await createApp(loadConfig({ ...env(), ...schema.env }), silentLogger);
      try {
        await check(app);
      } finally {
        await app.close();
        await schema.close();
      }
    },
  );
});
