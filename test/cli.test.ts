/** The CLI's own answers, as a user meets them: help, version, schema, and start-up errors in one line. */
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli, tempDataDir } from './helpers/cli.js';

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
  ])('%j with %j exits %i with one line that says what to do', async (args, extra, code, message) => {
    const r = await runCli(args, { ...env, ...extra });
    expect(r.code).toBe(code);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
