import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../core/log.js';
import { Upstream } from './upstream.js';

/** A real stdio upstream whose `hang` tool never answers. */
const fixture = fileURLToPath(new URL('../../test/fixtures/stubborn-upstream.mjs', import.meta.url));

describe('Upstream.callTool: the call bound replaces the SDK request default (60 s)', () => {
  let upstream: Upstream | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await upstream?.close();
  });

  it('waits past 60 s when the bound is longer, and ends at the bound', async () => {
    upstream = new Upstream(
      'slow',
      { command: process.execPath, args: [fixture], env: {} },
      {
        log: silentLogger,
        hooks: { onTools: () => {}, onDown: () => {} },
        writeStderr: () => {},
      },
    );
    await upstream.start();
    expect(upstream.connected).toBe(true);

    // Only the timers: the child process and its pipes keep running in real time.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let outcome: string | undefined;
    upstream.callTool('hang', {}, { timeoutMs: 120_000 }).then(
      () => (outcome = 'answered'),
      (err: Error) => (outcome = err.message),
    );
    await vi.advanceTimersByTimeAsync(61_000);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(59_000);
    expect(outcome).toMatch(/timed out/i);
  });
});

describe('Upstream over HTTP: a message over the bound is refused as it is read', () => {
  type Mode = 'json' | 'sse';
  /** A 2025-11-25 MCP server over HTTP whose tools/list carries a description of `bytes` bytes. */
  async function fakeHttpUpstream(mode: Mode, bytes: number): Promise<{ url: string; close(): Promise<void> }> {
    const server = createServer((req, res) => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const msg = JSON.parse(body) as { id?: number; method: string };
        if (msg.id === undefined) return void res.writeHead(202).end();
        let answer: object;
        if (msg.method === 'initialize') {
          answer = { result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'big', version: '1' } } };
        } else if (msg.method === 'tools/list') {
          answer = { result: { tools: [{ name: 'big', description: 'b'.repeat(bytes), inputSchema: { type: 'object' } }] } };
        } else answer = { error: { code: -32601, message: 'Method not found' } };
        const text = JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...answer });
        if (mode === 'json') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(text);
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        // Small events first (their total is over the bound: only one event is bounded).
        for (let i = 0; i < 12; i++) res.write(`: ${'k'.repeat(1 << 20)}\n\n`);
        res.end(`event: message\ndata: ${text}\n\n`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/mcp`, close: () => new Promise((resolve) => server.close(() => resolve())) };
  }

  let upstream: Upstream | undefined;
  let fake: { close(): Promise<void> } | undefined;
  afterEach(async () => {
    await upstream?.close();
    await fake?.close();
  });

  it.each([
    ['json', 11 * 1024 * 1024, false],
    ['sse', 11 * 1024 * 1024, false],
    ['json', 1024, true],
    ['sse', 1024, true],
  ] as const)('%s answer with a %i-byte tool description: connected %s', async (mode, bytes, connects) => {
    const server = await fakeHttpUpstream(mode, bytes);
    fake = server;
    const warnings: string[] = [];
    const log = {
      ...silentLogger,
      child: () => log,
      warn: (msg: string, fields?: Record<string, unknown>) => void warnings.push(`${msg} ${JSON.stringify(fields)}`),
    };
    let listed: number | undefined;
    upstream = new Upstream(
      'big',
      { url: server.url, headers: {} },
      {
        log: log as typeof silentLogger,
        connectTimeoutMs: 20_000,
        backoff: { initialMs: 60_000, maxMs: 60_000 },
        hooks: { onTools: (_id, tools) => void (listed = tools.length), onDown: () => {} },
      },
    );
    await upstream.start();
    expect(upstream.connected).toBe(connects);
    if (connects) expect(listed).toBe(1);
    else expect(warnings.join('\n')).toMatch(/over 10485760 bytes/);
  });
});
