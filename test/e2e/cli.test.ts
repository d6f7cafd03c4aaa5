/** The CLI's own answers, as a user meets them: help, version, schema, and start-up errors in one line. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ChildStdioTransport, CLI, cliEnv, runCli, tempDataDir } from '../helpers/cli.js';

const env = cliEnv({ NOTIFY_DATA_DIR: tempDataDir() });

describe('notify-mcp CLI', () => {
  it('prints help and version', async () => {
    expect((await runCli(['--help'], env)).stdout).toContain('notify-mcp schema [--profile P]');
    expect((await runCli(['--version'], env)).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('prints a profile with hashes and fingerprint, deterministically', async () => {
    const a = await runCli(['schema', '--profile', 'oneOf'], env);
    const b = await runCli(['schema', '--profile', 'oneOf'], env);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    const printed = JSON.parse(a.stdout);
    expect(printed).toMatchObject({ profile: 'oneOf', fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(Object.keys(printed.hashes)).toEqual(printed.tools.map((t: { name: string }) => t.name));
  });

  it.each([
    [['schema', '--profile', 'fancy'], {}, 2, /--profile must be one of flat, nested, oneOf, per-channel/],
    [['frobnicate'], {}, 2, /Unknown command "frobnicate"/],
    [['--http', '--host', '0.0.0.0', '--port', '0'], {}, 2, /set NOTIFY_HTTP_TOKENS/],
    [[], { SLACK_BOT_TOKEN: 'xoxb-1' }, 2, /set NOTIFY_SLACK_ALLOW/],
    [['outbox'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x' }, 1, /could not open the PostgreSQL store/],
    // An integer to JavaScript, a datatype mismatch (and a stack trace) to SQLite.
    [['outbox', '--limit', '1e99'], {}, 2, /--limit must be a positive integer, e\.g\. --limit 50/],
  ])('%j with %j exits %i with one line that says what to do', async (args, extra, code, message) => {
    const r = await runCli(args, { ...env, ...extra });
    expect(r.code).toBe(code);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('answers an unknown or incomplete flag with our usage and exit 2, not parseArgs text', async () => {
    for (const [args, said] of [
      [['--bogus'], 'unknown option --bogus'],
      [['--port'], '--port needs a value'],
      [['outbox', '--limt', '5'], 'unknown option --limt'],
    ] as const) {
      const r = await runCli([...args], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^notify-mcp: ${said}; use one of the forms below\nUsage:`));
      expect(r.stderr).not.toMatch(/positional argument|ERR_PARSE_ARGS/);
    }
  });

  it('outbox against a directory without a store says so and creates nothing', async () => {
    const empty = join(tempDataDir(), 'mistyped');
    const r = await runCli(['outbox'], { ...env, NOTIFY_DATA_DIR: empty });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^notify-mcp: Set NOTIFY_DATA_DIR to the directory the server uses .*there is no store at .*mistyped\/notify\.db, and nothing was created\.\n$/,
    );
    expect(existsSync(empty)).toBe(false);
  });

  it('outbox into a reader that stops early (| head) ends quietly, exit 0, no EPIPE stack', async () => {
    const dataDir = tempDataDir();
    const calls =
      Array.from({ length: 300 }, (_, i) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: i + 1,
          method: 'tools/call',
          params: {
            name: 'send_notification',
            arguments: { via: 'sms', to: '+14155550100', body: `Deploy ${i} is live.` },
            _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
          },
        }),
      ).join('\n') + '\n';
    const served = spawn(process.execPath, [CLI], { env: { ...env, NOTIFY_DATA_DIR: dataDir }, stdio: ['pipe', 'ignore', 'ignore'] });
    served.stdin.end(calls);
    await once(served, 'exit');
    // More than a pipe holds (300 records of ~600 bytes), read one chunk, then close the pipe.
    const outbox = spawn(process.execPath, [CLI, 'outbox', '--limit', '300'], {
      env: { ...env, NOTIFY_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    outbox.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const [first] = (await once(outbox.stdout, 'data')) as [Buffer];
    expect(first.toString()).toMatch(/^\{"id":"ntf_/);
    outbox.stdout.destroy();
    const [code] = (await once(outbox, 'exit')) as [number];
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(code).toBe(0);
  });

  it('--env-file reads a .env file (the environment wins), and a missing one says what to do', async () => {
    const dir = tempDataDir();
    const file = join(dir, '.env');
    writeFileSync(file, 'NOTIFY_DEFAULT_PROFILE=per-channel\nNOTIFY_LOG_LEVEL=error\n');
    const fromFile = JSON.parse((await runCli(['schema', '--env-file', file], env)).stdout) as { profile: string };
    expect(fromFile.profile).toBe('per-channel');
    const overridden = JSON.parse((await runCli(['schema', '--env-file', file], { ...env, NOTIFY_DEFAULT_PROFILE: 'nested' })).stdout) as {
      profile: string;
    };
    expect(overridden.profile).toBe('nested');
    // Node 20 itself also acts on an --env-file anywhere on the command line, and stops first
    // on a missing file (exit 9); src/config/config.test.ts checks our own message for that case.
    const missing = await runCli(['schema', '--env-file', join(dir, 'nope.env')], env);
    expect(missing.code).not.toBe(0);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toContain('nope.env');
  });

  it('serving with a store it cannot open exits 1 with that line, whether or not a client talks first', async () => {
    const dataDir = tempDataDir();
    const db = new Database(join(dataDir, 'notify.db'));
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
    db.prepare('INSERT INTO schema_migrations VALUES (999, ?, 0)').run('from a later build');
    db.close();
    const newer = /^notify-mcp: the SQLite store is at schema version 999, newer than this build knows \(\d+\); upgrade notify-mcp$/m;
    // stdin at its end at once (runCli): the session never needed the store, and still says it.
    const quiet = await runCli([], { ...env, NOTIFY_DATA_DIR: dataDir });
    expect(quiet.code).toBe(1);
    expect(quiet.stderr).toMatch(newer);
    // stdin held open, a client answered first: the store's failure still ends the process.
    const t = new ChildStdioTransport([], { ...env, NOTIFY_DATA_DIR: dataDir });
    await t.start();
    const exited = new Promise<number | null>((resolve) => t.child.once('exit', resolve));
    await t.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect(await exited).toBe(1);
    expect(t.stderr).toMatch(newer);
    expect(t.stderr).not.toMatch(/\n\s+at /);
  });

  it('logs its SQLite file at info on start', async () => {
    const dataDir = tempDataDir();
    const t = new ChildStdioTransport([], { ...env, NOTIFY_DATA_DIR: dataDir });
    await t.start();
    await new Promise<void>((resolve) => {
      const check = () => (t.stderr.includes('"msg":"channels"') ? resolve() : setTimeout(check, 20));
      check();
    });
    await t.close();
    const line = t.stderr.split('\n').find((l) => l.includes('"msg":"channels"'))!;
    expect(JSON.parse(line)).toMatchObject({ level: 'info', store: 'sqlite', file: join(dataDir, 'notify.db') });
  });
});
