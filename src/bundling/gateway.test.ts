import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, silentLogger } from '../core/log.js';
import { GatewayConfigError, GatewayStartError, runGateway } from './index.js';

/** In-process: runGateway with injected streams, one real upstream (server-memory). */
// server-memory is a test tool: installed in test/ (test/package.json), not beside this file.
const require = createRequire(new URL('../../test/package.json', import.meta.url));
const memoryManifest = require.resolve('@modelcontextprotocol/server-memory/package.json');
const memoryBin = join(dirname(memoryManifest), (require(memoryManifest) as { bin: Record<string, string> }).bin['mcp-server-memory']!);

let dir: string;
let configPath: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bundle-gw-'));
  configPath = join(dir, 'servers.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: { memory: { command: process.execPath, args: [memoryBin], env: { MEMORY_FILE_PATH: join(dir, 'm.jsonl') } } },
    }),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function jsonLines(stream: PassThrough): { next(id: number | null): Promise<Record<string, any>> } {
  const got: Record<string, any>[] = [];
  let buf = '';
  stream.on('data', (c: Buffer) => {
    buf += c.toString();
    for (let nl; (nl = buf.indexOf('\n')) >= 0; buf = buf.slice(nl + 1)) got.push(JSON.parse(buf.slice(0, nl)));
  });
  return {
    async next(id) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const m = got.find((x) => x.id === id);
        if (m) return m;
        if (Date.now() > deadline) throw new Error(`no response ${id}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

describe('runGateway (in process)', () => {
  it('serves over injected streams and stops its upstreams when the input ends', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const out = jsonLines(stdout);
    const upstreamLines: string[] = [];
    const gateway = await runGateway({
      configPath,
      log: silentLogger,
      stdin,
      stdout,
      writeUpstreamStderr: (l) => void upstreamLines.push(l),
    });
    const send = (m: object) => stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const init = await out.next(1);
    expect(init.result.capabilities.tools).toEqual({ listChanged: true });
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/list' });
    const list = await out.next(2);
    expect(list.result.tools.map((t: { name: string }) => t.name)).toContain('read_graph');
    send({ id: 3, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } });
    const call = await out.next(3);
    expect(call.result.isError).toBe(true);
    expect(call.result.content[0].text).toContain('read_graph');

    stdin.end();
    await gateway.closed; // would hang (and time out) if input end did not stop it
    expect(gateway.manager.current.reconciled.tools.length).toBeGreaterThan(0);
    // server-memory's plain-text start-up line, wrapped and tagged with its server id.
    expect(upstreamLines.map((l) => JSON.parse(l))).toContainEqual(
      expect.objectContaining({ upstream: 'memory', msg: expect.stringMatching(/running on stdio/i) }),
    );
  });

  it('answers what the SDK would drop or dump (non-object arguments, a batch, an oversized line) and keeps serving', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const out = jsonLines(stdout);
    const gateway = await runGateway({ configPath, log: silentLogger, stdin, stdout });
    const send = (m: object) => stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    await out.next(1);
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/call', params: { name: 'read_graph', arguments: 'everything' } });
    const call = await out.next(2);
    expect(call.error).toBeUndefined();
    expect(call.result.isError).toBe(true);
    expect(call.result.content[0].text).toContain('must be a JSON object');
    stdin.write(JSON.stringify([{ jsonrpc: '2.0', id: 3, method: 'tools/list' }]) + '\n');
    expect((await out.next(null)).error.code).toBe(-32600);
    // Over the SDK transport's 10 MB buffer: it would close, and the gateway with it.
    send({
      id: 4,
      method: 'tools/call',
      params: { name: 'create_entities', arguments: { entities: [{ name: 'x'.repeat(11 * 1024 * 1024) }] } },
    });
    expect((await out.next(4)).error.code).toBe(-32600);
    send({ id: 5, method: 'tools/list' });
    expect((await out.next(5)).result.tools.length).toBeGreaterThan(0);
    stdin.end();
    await gateway.closed;
  });

  it('rejects a non-loopback HTTP address and a bad servers file with GatewayConfigError', async () => {
    await expect(runGateway({ configPath, log: silentLogger, http: { host: '0.0.0.0', port: 0 } })).rejects.toThrow(GatewayConfigError);
    await expect(runGateway({ configPath: join(dir, 'missing.json'), log: silentLogger })).rejects.toThrow(GatewayConfigError);
  });

  it('serves HTTP on an ephemeral loopback port, and nothing but /mcp', async () => {
    const gateway = await runGateway({ configPath, log: silentLogger, http: { host: '127.0.0.1', port: 0 } });
    try {
      expect(gateway.http?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const res = await fetch(gateway.http!.url.replace('/mcp', '/other'));
      expect(res.status).toBe(404);
    } finally {
      await gateway.close();
    }
  });

  it('refuses a request from a page of another origin, as notify-mcp --http does', async () => {
    const gateway = await runGateway({ configPath, log: silentLogger, http: { host: '127.0.0.1', port: 0 } });
    try {
      const url = gateway.http!.url;
      const post = (origin?: string) =>
        fetch(url, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            ...(origin ? { Origin: origin } : {}),
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
          }),
        });
      for (const origin of ['https://evil.example', 'http://127.0.0.1:1', 'null', `http://evil.example:${gateway.http!.port}`]) {
        const res = await post(origin);
        expect(res.status, origin).toBe(403);
        expect(await res.text()).toBe('forbidden origin');
      }
      for (const origin of [undefined, `http://127.0.0.1:${gateway.http!.port}`, `http://localhost:${gateway.http!.port}`]) {
        const res = await post(origin);
        await res.text();
        expect(res.status, origin).toBe(200);
        expect(res.headers.get('mcp-session-id')).toBeTruthy();
      }
    } finally {
      await gateway.close();
    }
  });

  it("caps open 2025-era sessions and closes idle ones, with the server's own session registry", async () => {
    const gateway = await runGateway({
      configPath,
      log: silentLogger,
      http: { host: '127.0.0.1', port: 0, maxSessions: 3, sessionIdleMs: 1 },
    });
    try {
      const url = gateway.http!.url;
      const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
      const initialize = async () => {
        const res = await fetch(url, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
          }),
        });
        await res.text();
        return { status: res.status, id: res.headers.get('mcp-session-id') };
      };
      const opened = await Promise.all([initialize(), initialize(), initialize(), initialize(), initialize()]);
      expect(opened.map((o) => o.status).sort()).toEqual([200, 200, 200, 503, 503]);
      // Idle past the bound: swept, and the id is unknown from then on.
      const id = opened.find((o) => o.id)!.id!;
      const deadline = Date.now() + 15_000;
      let status = 0;
      while (Date.now() < deadline) {
        const res = await fetch(url, {
          method: 'POST',
          headers: { ...headers, 'Mcp-Session-Id': id, 'Mcp-Protocol-Version': '2025-11-25' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
        });
        await res.text();
        status = res.status;
        if (status === 404) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(status).toBe(404);
      expect((await initialize()).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });
});

describe('an upstream that cannot start', () => {
  // What Node prints when a native module was built for another Node, then exit 1: as notify-mcp
  // did under the Inspector's Node 22 before it said so itself.
  const FATAL = [
    "Error: The module '/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node'",
    'was compiled against a different Node.js version using',
    'NODE_MODULE_VERSION 115. This version of Node.js requires',
    'NODE_MODULE_VERSION 127. Please try re-compiling or re-installing',
  ];
  let dies: string;
  beforeAll(() => {
    dies = join(dir, 'dies.mjs');
    writeFileSync(dies, `process.stderr.write(${JSON.stringify(FATAL.join('\n') + '\n')}); process.exit(1);`);
  });
  const servers = (entries: Record<string, unknown>) => {
    const path = join(dir, `servers-${Object.keys(entries).join('-')}.json`);
    writeFileSync(path, JSON.stringify({ mcpServers: entries }));
    return path;
  };
  const memory = () => ({ command: process.execPath, args: [memoryBin], env: { MEMORY_FILE_PATH: join(dir, 'm2.jsonl') } });
  // No retry during the test: its first failure is what is checked.
  const backoff = { initialMs: 60_000, maxMs: 60_000 };

  it('is named with its exit code and last stderr lines: in an error log line tagged upstream, in the instructions, in a missed call', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const out = jsonLines(stdout);
    const logLines: string[] = [];
    const upstreamLines: string[] = [];
    const gateway = await runGateway({
      configPath: servers({ memory: memory(), notify: { command: process.execPath, args: [dies] } }),
      log: createLogger('info', (l) => void logLines.push(l)),
      backoff,
      stdin,
      stdout,
      writeUpstreamStderr: (l) => void upstreamLines.push(l),
    });
    try {
      const logged = logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(logged).toContainEqual(
        expect.objectContaining({
          level: 'error',
          msg: 'upstream could not start',
          upstream: 'notify',
          exit_code: 1,
          stderr: expect.arrayContaining([FATAL[3]]),
        }),
      );
      expect(upstreamLines.map((l) => JSON.parse(l))).toContainEqual(expect.objectContaining({ upstream: 'notify', msg: FATAL[2] }));

      const send = (m: object) => stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
      send({
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      const init = await out.next(1);
      expect(init.result.instructions).toContain(
        'Not serving now: notify could not start (connection closed, exit code 1); its stderr ended: ',
      );
      expect(init.result.instructions).toContain(FATAL[3]);
      send({ method: 'notifications/initialized' });
      send({ id: 2, method: 'tools/list' });
      expect((await out.next(2)).result.tools.map((t: { name: string }) => t.name)).toContain('read_graph');
      send({ id: 3, method: 'tools/call', params: { name: 'send_notification', arguments: {} } });
      const text = (await out.next(3)).result.content[0].text as string;
      expect(text).toContain('Unknown tool "send_notification"');
      expect(text).toContain('Not serving now: server "notify" could not start (connection closed, exit code 1)');
      expect(text).toContain(FATAL[3]);
    } finally {
      stdin.end();
      await gateway.closed;
    }
  });

  it('a gateway none of whose upstreams could start refuses to serve, naming each and why', async () => {
    const err = await runGateway({
      configPath: servers({ notify: { command: process.execPath, args: [dies] } }),
      log: silentLogger,
      backoff,
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      writeUpstreamStderr: () => {},
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GatewayStartError);
    expect((err as Error).message).toMatch(
      /no server of .* could start, so there is nothing to serve: "notify" could not start \(connection closed, exit code 1\); its stderr ended: .*NODE_MODULE_VERSION 127/,
    );
  });

  it('names an HTTP upstream that cannot be reached with its connect error', async () => {
    const err = await runGateway({
      configPath: servers({ remote: { url: 'http://127.0.0.1:9/mcp' } }),
      log: silentLogger,
      backoff,
      stdin: new PassThrough(),
      stdout: new PassThrough(),
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GatewayStartError);
    expect((err as Error).message).toMatch(/"remote" could not start \(connect failed: .+\)/);
  });
});
