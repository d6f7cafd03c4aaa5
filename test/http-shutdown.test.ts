/**
 * SIGTERM in the middle of a burst of sends against the built CLI (`npm run build` first):
 * every send that was answered with a result has its delivery record afterwards, the
 * process drains and exits 0, and later sends are refused rather than half-done. Slack is
 * live against a fake that answers in 300 ms, so sends are always in flight at the signal
 * (dry-run sends alone finish too fast to be sure of that). Two 2025-11-25 clients (sessions)
 * and one 2026-07-28 client (a request each) share the burst.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { CLI, cliEnv, runCli, tempDataDir } from './helpers/cli.js';
import { listenOnLoopback } from './helpers/fakes.js';
import { eraClient } from './helpers/mcp-cli.js';

const WORKERS = 30;
const SIGTERM_AFTER_ACKS = 40;

const NOTIFICATIONS = [
  { via: 'email', to: 'ops@example.com', subject: 'Deploy', body_html: '<p>Deployed <b>v2</b></p>' },
  { via: 'sms', to: '+14155550123', body: 'db-1 disk 91%' },
  { via: 'slack', channel: '#ops', text: 'Deploy finished' },
];

describe('notify-mcp --http under SIGTERM', () => {
  it('loses no acknowledged delivery record and exits 0', async () => {
    expect(existsSync(CLI), `${CLI} is missing: run npm run build first`).toBe(true);
    const slowSlack = await listenOnLoopback(
      createServer((req, res) => {
        req.resume();
        req.on('end', () =>
          setTimeout(() => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ ok: true, channel: 'C0123ABCD', ts: '1712345678.000100' }));
          }, 300),
        );
      }),
    );
    const env = cliEnv({
      NOTIFY_DATA_DIR: tempDataDir('notify-sigterm-'),
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_API_URL: slowSlack.origin,
      NOTIFY_SLACK_ALLOW: '*',
    });
    const child = spawn(process.execPath, [CLI, '--http', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "serving http" line: ${stderr}`)), 15_000);
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        const m = /"msg":"serving http","url":"([^"]+)"/.exec(stderr);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });

    const clients = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const client = eraClient(`burst-${i}`, i === 2 ? 'modern' : 'legacy');
        client.onerror = () => {}; // the GET stream ends at shutdown; that is expected
        await client.connect(new StreamableHTTPClientTransport(new URL(url)));
        return client;
      }),
    );

    const acked: string[] = [];
    const refused: string[] = [];
    let signalled = false;
    const worker = async (w: number) => {
      const client = clients[w % clients.length]!;
      for (let n = 0; n < 200; n++) {
        try {
          const result = await client.callTool(
            { name: 'send_notification', arguments: NOTIFICATIONS[(w + n) % NOTIFICATIONS.length]! },
            { timeout: 15_000 },
          );
          if (result.isError) throw new Error(`tool error: ${JSON.stringify(result.structuredContent)}`);
          acked.push((result.structuredContent as { id: string }).id);
          if (!signalled && acked.length >= SIGTERM_AFTER_ACKS) {
            signalled = true;
            child.kill('SIGTERM');
          }
        } catch (err) {
          refused.push(err instanceof Error ? err.message : String(err));
          return;
        }
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    const exit = await exited;
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await slowSlack.close();

    expect(signalled).toBe(true);
    expect(exit, stderr.slice(-2000)).toEqual({ code: 0, signal: null });
    expect(stderr).toContain('"msg":"shutting down","signal":"SIGTERM"');
    expect(stderr).toMatch(/"msg":"draining","inflight":[1-9]/);
    // The burst was cut by the shutdown: some workers were refused, none got a tool error.
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((m) => !m.startsWith('tool error'))).toBe(true);
    expect(acked.length).toBeGreaterThanOrEqual(SIGTERM_AFTER_ACKS);

    const outbox = await runCli(['outbox', '--limit', '100000'], env);
    expect(outbox.code, outbox.stderr).toBe(0);
    const recorded = new Set(outbox.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id));
    const lost = acked.filter((id) => !recorded.has(id));
    expect(lost).toEqual([]);
    // Nothing was recorded twice or invented: every record is one of the sends made.
    expect(recorded.size).toBeGreaterThanOrEqual(acked.length);
  }, 60_000);
});
