/**
 * docs/http.md's curl blocks, run as written (bash, curl) against the built server over
 * HTTP with a token: each era's dry-run send answers `dry_run`, and the delivery record
 * carries the token's client. A change to the envelope keys, the headers or the session
 * flow that the docs do not follow fails here.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { readOutbox } from '../helpers/mcp-cli.js';

const doc = readFileSync(new URL('../../docs/http.md', import.meta.url), 'utf8');
const section = doc.slice(doc.indexOf('## By hand, with curl'));
const setup = /```sh\n(URL=[^\n]*)\n```/.exec(section)?.[1];
const block = (era: string) => new RegExp(`<!-- curl: ${era} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\``).exec(section)?.[1];

const TOKEN = 'curl-docs-token-0123456789';
const env = cliEnv({ NOTIFY_DATA_DIR: tempDataDir(), NOTIFY_HTTP_TOKENS: `docs:${TOKEN}` });
let server: HttpCli;
beforeAll(async () => {
  server = await startHttpCli(env);
});
afterAll(async () => {
  await server?.stop();
});

const run = (script: string) =>
  execFileSync('bash', ['-euo', 'pipefail', '-c', `${setup}\n${script}`], {
    env: { ...env, URL: server.url, TOKEN },
    encoding: 'utf8',
    timeout: 20_000,
  });

describe('docs/http.md, by hand with curl', () => {
  it('has the setup line and a block per era', () => {
    expect(setup).toBeDefined();
    expect(block('modern')).toContain("'Mcp-Name: send_notification'");
    expect(block('legacy')).toContain('Mcp-Session-Id');
  });

  it('2026-07-28: the one request sends, in dry-run', () => {
    const out = JSON.parse(run(block('modern')!));
    expect(out.result.structuredContent).toMatchObject({ via: 'sms', status: 'dry_run' });
  });

  it('2025-11-25: initialize, the session, the call, and the session closed', () => {
    const out = run(block('legacy')!);
    const events = out
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    expect(events.find((e) => e.id === 2)?.result.structuredContent).toMatchObject({ via: 'sms', status: 'dry_run' });
  });

  it('both sends are recorded under the token client', async () => {
    const records = await readOutbox(env);
    expect(records.filter((r) => r.via === 'sms').map((r) => r.client)).toEqual(['docs', 'docs']);
  });
});
