/**
 * SIGTERM in the middle of a burst of sends against the built CLI (`npm run build` first):
 * - in-flight calls are waited for: every Slack post the fake had received and not yet
 *   answered at the signal gets its answer out before the process exits, and its call gets
 *   its real result (not an error);
 * - every send answered with a result has exactly one delivery record, and no send has two
 *   (records are counted per notification id and per call, each call's text carrying a tag);
 * - the process exits 0, and later sends are refused rather than half-done.
 * Slack is live against a fake that answers in 300 ms, so sends are always in flight at the
 * signal (dry-run sends alone finish too fast to be sure of that). Two 2025-11-25 clients
 * (sessions) and one 2026-07-28 client (a request each) share the burst.
 */
import { createServer } from 'node:http';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli, tempDataDir } from '../helpers/cli.js';
import { startHttpCli } from '../helpers/http-cli.js';
import { listenOnLoopback } from '../helpers/fakes.js';
import { eraClient } from '../helpers/mcp-cli.js';

const WORKERS = 30;
const SIGTERM_AFTER_ACKS = 40;

/** Each call's content carries its tag, so its delivery records can be told apart. */
const NOTIFICATIONS = [
  (tag: string) => ({ via: 'email', to: 'ops@example.com', subject: `Deploy ${tag}`, body_html: `<p>Deployed <b>v2</b> ${tag}</p>` }),
  (tag: string) => ({ via: 'sms', to: '+14155550123', body: `db-1 disk 91% ${tag}` }),
  (tag: string) => ({ via: 'slack', channel: '#ops', text: `Deploy finished ${tag}` }),
];
const TAG = /call-w\d+-n\d+/g;

describe('notify-mcp --http under SIGTERM', () => {
  it('waits for in-flight calls, records each answered send exactly once, and exits 0', async () => {
    // Per tag: when the post arrived, and when its answer was fully handed to the socket.
    const posts = new Map<string, { arrivedAt: number; answeredAt?: number }>();
    const slowSlack = await listenOnLoopback(
      createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8').on('data', (c: string) => (body += c));
        req.on('end', () => {
          const tag = body.match(TAG)?.[0];
          const post = { arrivedAt: Date.now() } as { arrivedAt: number; answeredAt?: number };
          if (tag) posts.set(tag, post);
          res.on('finish', () => (post.answeredAt = Date.now()));
          setTimeout(() => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ ok: true, channel: 'C0123ABCD', ts: '1712345678.000100' }));
          }, 300);
        });
      }),
    );
    const env = cliEnv({
      NOTIFY_DATA_DIR: tempDataDir('notify-sigterm-'),
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_API_URL: slowSlack.origin,
      NOTIFY_SLACK_ALLOW: '*',
    });
    const cli = await startHttpCli(env);
    const { child, url } = cli;
    let exitedAt = Infinity;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => {
        exitedAt = Date.now();
        resolve({ code, signal });
      }),
    );

    const clients = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const client = eraClient(`burst-${i}`, i === 2 ? 'modern' : 'legacy');
        client.onerror = () => {}; // the GET stream ends at shutdown; that is expected
        await client.connect(new StreamableHTTPClientTransport(new URL(url)));
        return client;
      }),
    );

    /** Notification id by call tag, for calls answered with a result. */
    const acked = new Map<string, string>();
    const refused: string[] = [];
    let signalled = false;
    /** Slack posts the fake had received but not answered when the signal was sent. */
    let inflightAtSignal: string[] = [];
    const worker = async (w: number) => {
      const client = clients[w % clients.length]!;
      for (let n = 0; n < 200; n++) {
        const tag = `call-w${w}-n${n}`;
        try {
          const result = await client.callTool(
            { name: 'send_notification', arguments: NOTIFICATIONS[(w + n) % NOTIFICATIONS.length]!(tag) },
            { timeout: 15_000 },
          );
          if (result.isError) throw new Error(`tool error: ${JSON.stringify(result.structuredContent)}`);
          acked.set(tag, (result.structuredContent as { id: string }).id);
          // Signal only while Slack posts are pending: dry-run email/SMS acks alone can reach
          // the count before the first post arrives (the Slack client loads on first use).
          const pending = [...posts].filter(([, p]) => p.answeredAt === undefined).map(([t]) => t);
          if (!signalled && acked.size >= SIGTERM_AFTER_ACKS && pending.length > 0) {
            signalled = true;
            inflightAtSignal = pending;
            child.kill('SIGTERM');
          }
        } catch (err) {
          refused.push(`${tag}: ${err instanceof Error ? err.message : String(err)}`);
          return;
        }
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    const exit = await exited;
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await slowSlack.close();

    expect(signalled).toBe(true);
    const stderr = cli.stderr();
    expect(exit, stderr.slice(-2000)).toEqual({ code: 0, signal: null });
    expect(stderr).toContain('"msg":"shutting down","signal":"SIGTERM"');
    expect(stderr).toMatch(/"msg":"draining","inflight":[1-9]/);
    // The burst was cut by the shutdown: some workers were refused, none got a tool error.
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((m) => !m.includes(': tool error'))).toBe(true);
    expect(acked.size).toBeGreaterThanOrEqual(SIGTERM_AFTER_ACKS);

    // In-flight calls were waited for: each provider call under way at the signal was
    // answered before the process exited, and its caller got the real result.
    expect(inflightAtSignal.length).toBeGreaterThan(0);
    for (const tag of inflightAtSignal) {
      const post = posts.get(tag)!;
      expect(post.answeredAt, `${tag}: Slack's answer never went out`).toBeDefined();
      expect(post.answeredAt!, `${tag}: answered after the process exited`).toBeLessThanOrEqual(exitedAt);
      expect(acked.has(tag), `${tag}: in flight at SIGTERM but got no result (${refused.find((m) => m.startsWith(`${tag}:`))})`).toBe(true);
    }

    const outbox = await runCli(['outbox', '--limit', '100000'], env);
    expect(outbox.code, outbox.stderr).toBe(0);
    const records = outbox.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; payload: unknown });
    // One record per notification id, and per call: a send recorded twice (under its id or
    // under a second one) fails here.
    const perId = new Map<string, number>();
    const idsByTag = new Map<string, string[]>();
    for (const r of records) {
      perId.set(r.id, (perId.get(r.id) ?? 0) + 1);
      const tags = new Set(JSON.stringify(r.payload).match(TAG) ?? []);
      expect([...tags], `record ${r.id} carries one call's tag`).toHaveLength(1);
      const [tag] = tags;
      idsByTag.set(tag!, [...(idsByTag.get(tag!) ?? []), r.id]);
    }
    expect([...perId].filter(([, n]) => n !== 1)).toEqual([]);
    expect([...idsByTag].filter(([, ids]) => ids.length !== 1)).toEqual([]);
    // Nothing acknowledged was lost: each answered call has its record, under the id it was given.
    const lost = [...acked].filter(([tag, id]) => idsByTag.get(tag)?.[0] !== id);
    expect(lost).toEqual([]);
  }, 60_000);
});
