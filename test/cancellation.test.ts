/**
 * Cancellation reaches the tool, in each protocol era and on each transport, the way that
 * revision lets a client cancel: `notifications/cancelled` on stdio (both eras) and in a
 * 2025-11-25 HTTP session; closing the request's response under 2026-07-28 HTTP, which has
 * no cancel message. A test-only tool waits for its call's signal and records it; the
 * server answers nothing for a cancelled request and keeps serving.
 */
import { PassThrough } from 'node:stream';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp, type App } from '../src/app.js';
import { bannerTools } from '../src/banners/index.js';
import { buildCatalog } from '../src/catalog.js';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import type { ObjectToolSpec } from '../src/tool.js';
import { serveHttp, type HttpHandle } from '../src/transports/http.js';
import { serveStdio } from '../src/transports/stdio.js';
import { tempDataDir } from './helpers/cli.js';
import { ERAS, eraClient, MODERN_VERSION, type Era } from './helpers/mcp-cli.js';

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
      write({ id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
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
