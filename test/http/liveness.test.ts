/**
 * Issue 16: one input must not stall every client. The built CLI serves HTTP in dry-run while
 * this test sends, a few at a time, accepted calls built to be expensive (deep nesting,
 * unclosed tags, long runs of `<`, entity floods, the longest recipients, both parts at
 * full size…), each just under the 1 MiB body limit, and polls GET /healthz throughout:
 * every poll must answer within 1 s (the number) of a bare Node HTTP server polled
 * at the same moment, so that a machine slowed by other work is not taken for a stalled
 * server; and every call must end in a result or a coded error. A separate process, because
 * a stalled event loop would also stall an in-process test's own timers. `npm run build`
 * first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/errors.js';
import { CLI, cliEnv, tempDataDir } from '../helpers/cli.js';

const HEALTHZ_BOUND_MS = 1_000;
/** When a poll is given up: an answer this late is a stall whatever the control says. */
const GIVE_UP_MS = 10_000;
const POLL_EVERY_MS = 100;
/** What the arguments of one call may take, leaving room for the JSON-RPC envelope. */
const ARGS_BYTES = 1_040_000;

/** Calls in flight at once: enough that they overlap, and that the converter has a queue. */
const IN_FLIGHT = 3;

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** `unit` repeated to fill `bytes` of UTF-8 JSON (quotes and escapes count). */
function fill(unit: string, bytes = ARGS_BYTES - 200): string {
  return unit.repeat(Math.floor(bytes / (jsonBytes(unit) - 2)));
}

const email = (body_html: string, extra: Record<string, unknown> = {}) => ({
  via: 'email',
  to: 'ops@example.com',
  subject: 'Liveness',
  body_html,
  ...extra,
});
const address254 = (i: number) =>
  `${String(i).padStart(2, '0')}${'a'.repeat(62)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(53)}.example`;

const CALLS: Record<string, Record<string, unknown>> = {
  // body_text derived from these (the old hand-written converter took from 17 s to minutes on
  // the first four; html-to-text is quadratic in nesting depth on the next three).
  'unclosed <style': email(fill('<style ')),
  'unclosed <script>': email(fill('<script>')),
  'unclosed <a href>': email(fill('<a href="https://x.example/">')),
  'run of <': email(fill('<')),
  'deep nesting <b>': email(fill('<b>')),
  'deep nesting <pre>': email(fill('<pre>')),
  'deep nesting <div>': email(fill('<div>')),
  'entity flood': email(fill('&amp;&#x263A;&nbsp;')),
  'huge attribute list': email(`<p ${fill('a=b ', ARGS_BYTES - 400)}>x</p>`),
  'many table cells': email(fill('<tr><td>x</td><td>y</td></tr>')),
  'ordinary large HTML': email(fill('<p>Disk <b>91%</b> on <a href="https://ops.example/db-1">db-1</a> &amp; db-2</p>\n')),
  // MIME build: the longest accepted recipients, and both parts at full size.
  '50 recipients of 254 characters': email('<p>x</p>', {
    to: Array.from({ length: 50 }, (_, i) => address254(i)),
    reply_to: address254(99),
    body_text: fill('é\r\n.= ', 300_000),
    subject: 'é'.repeat(255),
  }),
  'both parts at full size': email(fill('<p>é€😀 =\r\n</p>', 500_000), { body_text: fill('é€😀 =\r\n.', 500_000) }),
  // The other channels at their limits.
  'slack text at its limit': { via: 'slack', channel: '#ops', text: '<!channel> <'.repeat(3_333) },
  'sms body at its limit': { via: 'sms', to: '+14155550123', body: '€'.repeat(80) },
};

/** GET /healthz; resolves with the time it took, or GIVE_UP_MS when no answer came in it. */
function healthz(origin: string): Promise<{ ms: number; status?: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(`${origin}/healthz`, { timeout: GIVE_UP_MS }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ ms: Math.max(GIVE_UP_MS, performance.now() - started) }));
    req.end();
  });
}

/** A bare Node HTTP server in its own process: what the machine alone costs a request now. */
const CONTROL = `require('node:http').createServer((q, s) => s.end('{"ok":true}')).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;

type Outcome = { name: string; kind: 'result' | 'coded' | 'failed'; detail: string };

describe('notify-mcp --http under expensive accepted calls', () => {
  let child: ChildProcess | undefined;
  let control: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
    control?.kill('SIGKILL');
  });

  it('answers /healthz within 1 s of a bare server throughout, and ends every call in a result or a coded error', async () => {
    expect(existsSync(CLI), `${CLI} is missing: run npm run build first`).toBe(true);
    for (const [name, args] of Object.entries(CALLS)) {
      expect(jsonBytes(args), name).toBeLessThanOrEqual(ARGS_BYTES);
    }

    // A budget of 12 s gives an email 6 s to be built (2 to wait for a worker, 4 to run):
    // the calls that hit a limit end sooner than with the default 20 s.
    const env = cliEnv({ NOTIFY_DATA_DIR: tempDataDir('notify-liveness-'), NOTIFY_SEND_BUDGET_MS: '12000' });
    const server = spawn(process.execPath, [CLI, '--http', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    child = server;
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "serving http" line: ${stderr}`)), 15_000);
      server.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        const m = /"msg":"serving http","url":"([^"]+)"/.exec(stderr);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    const origin = new URL(url).origin;
    control = spawn(process.execPath, ['-e', CONTROL], { stdio: ['ignore', 'pipe', 'ignore'] });
    const controlOrigin = await new Promise<string>((resolve) => {
      control!.stdout!.setEncoding('utf8').once('data', (port: string) => resolve(`http://127.0.0.1:${port.trim()}`));
    });

    const client = new Client({ name: 'liveness', version: '1' });
    client.onerror = () => {};
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));

    // Polls until the calls are done, or stops at the first late answer (a stalled server
    // would otherwise keep this test waiting for minutes).
    // Each poll: how much longer than the control's answer at the same moment ours took.
    const polls: number[] = [];
    let late: number | undefined;
    let callsDone = false;
    const poller = (async () => {
      while (!callsDone && late === undefined) {
        const [{ ms, status }, bare] = await Promise.all([healthz(origin), healthz(controlOrigin)]);
        const excess = ms >= GIVE_UP_MS ? ms : ms - bare.ms;
        polls.push(excess);
        if (excess >= HEALTHZ_BOUND_MS || status !== 200) late = ms;
        else await new Promise((r) => setTimeout(r, POLL_EVERY_MS));
      }
    })();

    const outcomes: Outcome[] = [];
    const pending = Object.entries(CALLS);
    const runner = async () => {
      for (let next = pending.shift(); next && late === undefined; next = pending.shift()) {
        const [name, args] = next;
        try {
          const result = await client.callTool({ name: 'send_notification', arguments: args }, undefined, { timeout: 60_000 });
          const sc = result.structuredContent as { status?: string; error?: { code: string; message: string } };
          if (!result.isError) outcomes.push({ name, kind: 'result', detail: String(sc.status) });
          else if (sc.error && (ERROR_CODES as readonly string[]).includes(sc.error.code) && sc.error.code !== 'INTERNAL_ERROR') {
            outcomes.push({ name, kind: 'coded', detail: `${sc.error.code}: ${sc.error.message.slice(0, 120)}` });
          } else outcomes.push({ name, kind: 'failed', detail: JSON.stringify(sc).slice(0, 300) });
        } catch (err) {
          outcomes.push({ name, kind: 'failed', detail: String(err) });
        }
      }
    };
    const calls = Promise.all(Array.from({ length: IN_FLIGHT }, runner)).finally(() => (callsDone = true));

    await Promise.race([calls, poller.then(() => (late === undefined ? calls : undefined))]);
    if (late !== undefined) {
      // Stalled: end it, and the calls in flight with it rather than at their timeout.
      server.kill('SIGKILL');
      await client.close().catch(() => {});
    }
    await calls;
    await poller;
    await client.close().catch(() => {});

    const report = outcomes.map((o) => `${o.kind.padEnd(6)} ${o.name}: ${o.detail}`).join('\n');
    expect(
      late,
      `GET /healthz took ${late?.toFixed(0)} ms, 1 s or more past a bare server, while the calls ran:\n${report}`,
    ).toBeUndefined();
    expect(polls.length).toBeGreaterThan(0);
    expect(Math.max(...polls)).toBeLessThan(HEALTHZ_BOUND_MS);
    expect(outcomes, report).toHaveLength(Object.keys(CALLS).length);
    expect(
      outcomes.filter((o) => o.kind === 'failed'),
      report,
    ).toEqual([]);
    // The recipients and full-size parts need no conversion: they are sent (dry run).
    for (const name of ['50 recipients of 254 characters', 'both parts at full size', 'sms body at its limit']) {
      expect(
        outcomes.find((o) => o.name === name),
        report,
      ).toMatchObject({ kind: 'result', detail: 'dry_run' });
    }
  }, 120_000);
});
