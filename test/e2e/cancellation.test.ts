/**
 * Cancellation reaches the tool, in each protocol era and on each transport, the way that
 * revision lets a client cancel: `notifications/cancelled` on stdio (both eras) and in a
 * 2025-11-25 HTTP session; closing the request's response under 2026-07-28 HTTP, which has
 * no cancel message. A test-only tool waits for its call's signal and records it; the
 * server answers nothing for a cancelled request and keeps serving.
 *
 * Then the same reaches a live send, in each era over HTTP, against a Slack fake that holds
 * its answers until released, with one Slack slot: a call cancelled while its request waits
 * for the slot sends nothing (the fake never sees it; its idempotency key is released, so a
 * retry sends); a call cancelled while its post is at the fake runs on, and the outbox
 * records it as sent.
 */
import { createServer } from 'node:http';
import { PassThrough } from 'node:stream';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp, type App } from '../../src/app.js';
import { bannerTools } from '../../src/mcp/tools/index.js';
import { buildCatalog } from '../../src/mcp/catalog.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/core/log.js';
import { closeChannels, connectChannels } from '../../src/channels/connect.js';
import type { Provider } from '../../src/providers/types.js';
import type { ObjectToolSpec } from '../../src/mcp/tool-kit.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { serveStdio } from '../../src/transports/stdio/stdio.js';
import { tempDataDir } from '../helpers/cli.js';
import { listenOnLoopback } from '../helpers/fakes.js';
import { ERAS, eraClient, MODERN_VERSION, type Era } from '../helpers/mcp-cli.js';

/** Calls of wait_for_cancel that saw their signal abort, by call tag. */
const aborted = new Set<string>();
const started = new Set<string>();

const waitForCancel: ObjectToolSpec = {
  name: 'wait_for_cancel',
  title: 'Wait for cancel',
  description: 'Test only: waits until the call is cancelled (at most 10 s).',
  input: z.object({ tag: z.string() }),
  outputSchema: { type: 'object', properties: { cancelled: { type: 'boolean' } } },
  annotations: { readOnlyHint: true },
  async handler(args, ctx) {
    const { tag } = args as { tag: string };
    started.add(tag);
    const cancelled = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        aborted.add(tag);
        resolve(true);
      });
    });
    return { cancelled };
  },
};

let base: App;
let app: App;
beforeAll(async () => {
  base = await createApp(loadConfig({ NOTIFY_DATA_DIR: tempDataDir() }), silentLogger);
  app = { ...base, catalog: buildCatalog(base.config, [...bannerTools, waitForCancel]) };
});
afterAll(async () => {
  await base.close();
});

async function until(what: string, probe: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {} };

describe.each(ERAS)('stdio, %s', (era: Era) => {
  it('notifications/cancelled aborts the call, nothing answers it, and the connection keeps serving', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const lines: Record<string, any>[] = [];
    let buf = '';
    stdout.setEncoding('utf8').on('data', (c: string) => {
      buf += c;
      for (let nl; (nl = buf.indexOf('\n')) >= 0; buf = buf.slice(nl + 1)) lines.push(JSON.parse(buf.slice(0, nl)));
    });
    const { closed } = await serveStdio(app, { stdin, stdout });
    const write = (m: object) => stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
    const params = (p: Record<string, unknown>) => (era === 'modern' ? { ...p, _meta: envelope } : p);
    if (era === 'legacy') {
      write({
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      write({ method: 'notifications/initialized' });
    }
    const tag = `stdio-${era}`;
    write({ id: 2, method: 'tools/call', params: params({ name: 'wait_for_cancel', arguments: { tag } }) });
    await until('the call to start', () => started.has(tag));
    write({ method: 'notifications/cancelled', params: { requestId: 2, reason: 'user' } });
    await until('the tool to see the abort', () => aborted.has(tag));

    write({ id: 3, method: 'tools/list', params: params({}) });
    await until('tools/list to be answered', () => lines.some((l) => l.id === 3));
    expect(lines.find((l) => l.id === 3)!.result.tools.length).toBeGreaterThan(0);
    expect(lines.some((l) => l.id === 2)).toBe(false);
    stdin.end();
    await closed;
  });
});

describe('Streamable HTTP', () => {
  let http: HttpHandle;
  beforeAll(async () => {
    http = await serveHttp(app, { port: 0 });
  });
  afterAll(async () => {
    await http?.close();
  });

  it.each(ERAS)('a client that gives up on a call aborts it (%s client)', async (era) => {
    const client: Client = eraClient(`cancel-${era}`, era);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`)));
    const tag = `http-${era}`;
    const controller = new AbortController();
    const call = client.callTool({ name: 'wait_for_cancel', arguments: { tag } }, { signal: controller.signal });
    await until('the call to start', () => started.has(tag));
    // 2025-11-25: the client POSTs notifications/cancelled in its session. 2026-07-28: it
    // closes the request's response; there is no cancel message on HTTP any more.
    controller.abort();
    await expect(call).rejects.toThrow();
    await until('the tool to see the abort', () => aborted.has(tag));
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
  });
});

describe.each(ERAS)('a live send cancelled over HTTP (%s client)', (era: Era) => {
  /** Posts the fake received, by tag, and answers it holds back until released. */
  const posts: string[] = [];
  let held: (() => void)[] = [];
  let hold = true;
  /** Tags of sends that reached the Slack provider (and so its slot queue). */
  const entered: string[] = [];
  let fake: { origin: string; close(): Promise<void> };
  let live: App;
  let http: HttpHandle;
  let closeProviders: () => Promise<void>;

  const tagOf = (text: string) => /tag-\w+/.exec(text)?.[0] ?? '?';
  const answer = (res: import('node:http').ServerResponse) => () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true, channel: 'C0123ABCD', ts: `1712345678.${String(posts.length).padStart(6, '0')}` }));
  };
  const release = () => {
    hold = false;
    for (const r of held.splice(0)) r();
  };

  beforeAll(async () => {
    fake = await listenOnLoopback(
      createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8').on('data', (c: string) => (body += c));
        req.on('end', () => {
          posts.push(tagOf(decodeURIComponent(body)));
          if (hold) held.push(answer(res));
          else answer(res)();
        });
      }),
    );
    const config = loadConfig({
      NOTIFY_DATA_DIR: tempDataDir('notify-cancel-'),
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_API_URL: fake.origin,
      NOTIFY_SLACK_ALLOW: '*',
      NOTIFY_PROVIDER_CONCURRENCY: '1',
    });
    const real = await connectChannels(config, silentLogger);
    closeProviders = () => closeChannels(real);
    const slack = real.find((c) => c.name === 'slack')!.open((c) => c.provider as Provider<unknown>) as Provider<{ text: string }>;
    const spied: Provider<{ text: string }> = {
      name: slack.name,
      send(payload, ctx) {
        entered.push(tagOf(payload.text));
        return slack.send(payload, ctx);
      },
    };
    live = await createApp(config, silentLogger, { providers: { slack: spied as Provider<unknown> } });
    http = await serveHttp(live, { port: 0 });
  });
  afterAll(async () => {
    release();
    await http?.close();
    await live?.close();
    await closeProviders?.();
    await fake?.close();
  });

  const send = (client: Client, tag: string, extra: Record<string, unknown> = {}, signal?: AbortSignal) =>
    client.callTool(
      { name: 'send_notification', arguments: { via: 'slack', channel: 'C0123ABCD', text: `Deploy ${tag}`, ...extra } },
      signal ? { signal } : undefined,
    );

  it('cancelled while waiting for the provider: nothing reaches Slack; after the provider call started: the send is recorded', async () => {
    const client: Client = eraClient(`live-cancel-${era}`, era);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`)));
    try {
      // A holds the only Slack slot, its post parked at the fake.
      const a = send(client, `tag-a${era}`);
      await until('A to reach Slack', () => posts.includes(`tag-a${era}`));

      // B waits for the slot; cancelled there, it must never be posted.
      const key = `cancel-${era}`;
      const bCancel = new AbortController();
      const b = send(client, `tag-b${era}`, { idempotency_key: key }, bCancel.signal);
      await until('B to reach the provider queue', () => entered.includes(`tag-b${era}`));
      bCancel.abort();
      await expect(b).rejects.toThrow();

      // C gets the slot once A is answered, and is cancelled while its post is at the fake.
      const cCancel = new AbortController();
      const c = send(client, `tag-c${era}`, {}, cCancel.signal);
      await until('C to wait for the slot', () => entered.includes(`tag-c${era}`));
      for (const r of held.splice(0)) r();
      expect((await a).isError).toBeFalsy();
      await until('C to reach Slack', () => posts.includes(`tag-c${era}`));
      cCancel.abort();
      await expect(c).rejects.toThrow();
      release();
      await live.drain();

      expect(posts.filter((t) => t.endsWith(era))).toEqual([`tag-a${era}`, `tag-c${era}`]);
      const records = await live.store.listDeliveries(100);
      const byTag = (tag: string) => records.filter((r) => JSON.stringify(r.payload).includes(tag));
      // B: dropped from the queue, recorded as not sent.
      expect(byTag(`tag-b${era}`)).toMatchObject([{ status: 'failed', error_code: 'CANCELLED', attempt_log: [{ outcome: 'cancelled' }] }]);
      // C: its post went out before the cancel; the record says so.
      expect(byTag(`tag-c${era}`)).toMatchObject([{ status: 'sent', provider_message_id: expect.any(String) }]);

      // B's idempotency key was released: the same call, not cancelled, sends once.
      const retried = await send(client, `tag-b${era}`, { idempotency_key: key });
      expect(retried.isError, JSON.stringify(retried.structuredContent)).toBeFalsy();
      expect(retried.structuredContent).not.toHaveProperty('replayed');
      expect(posts.filter((t) => t === `tag-b${era}`)).toHaveLength(1);
    } finally {
      hold = true;
      await client.close();
    }
  });
});
