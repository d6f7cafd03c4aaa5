/**
 * The bundle gateway end to end, as a real process, against real MCP servers from npm:
 * two copies of server-everything (every name collides) and server-memory, which speak
 * 2025-11-25 only, and notify-mcp itself, which the gateway reaches over 2026-07-28. Runs
 * the built CLI, `node dist/cli.js bundle` (`npm test` builds first), and drives it with a
 * 2025-11-25 client and a 2026-07-28 one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { ERAS, MODERN_VERSION, type Era } from '../helpers/mcp-cli.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const builtGateway = join(root, 'dist/bundling/gateway.js');
const notifyCli = join(root, 'dist/cli.js');
const require = createRequire(import.meta.url);

/** A package's bin script, from its package.json `bin` entry. */
function binOf(pkg: string): string {
  const manifestPath = require.resolve(`${pkg}/package.json`);
  const manifest = require(manifestPath) as { bin: Record<string, string> };
  return join(dirname(manifestPath), Object.values(manifest.bin)[0]!);
}
const everythingBin = binOf('@modelcontextprotocol/server-everything');
const memoryBin = binOf('@modelcontextprotocol/server-memory');

/** Fail with instructions rather than test stale code. */
function assertBuilt(): void {
  for (const f of [builtGateway, notifyCli]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run \`npm run build\` first`);
  }
  const built = statSync(builtGateway).mtimeMs;
  const srcDir = join(root, 'src/bundling');
  const stale = readdirSync(srcDir).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && statSync(join(srcDir, f)).mtimeMs > built,
  );
  if (stale.length) throw new Error(`dist is older than src/bundling/${stale[0]}: run \`npm run build\` first`);
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const textOf = (r: unknown): string => ((r as CallToolResult).content[0] as { text: string }).text;
type LogLine = Record<string, unknown>;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A client of that era that counts tools/list_changed (2026-07-28: over its subscriptions/listen stream). */
function countingClient(name: string, era: Era, onChanged: () => void): Client {
  return new Client(
    { name, version: '1.0.0' },
    {
      ...(era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN_VERSION } } } : {}),
      listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged } },
    },
  );
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

describe.each(ERAS)('notify-mcp bundle gateway (stdio, real upstreams, %s client)', (era) => {
  let dir: string;
  let client: Client;
  let transport: StdioClientTransport;
  const logs: LogLine[] = [];
  const nonJsonStderr: string[] = [];
  const clientErrors: Error[] = [];
  let listChanged = 0;

  const upstreamPids = (server: string): number[] =>
    logs.filter((l) => l.msg === 'upstream connected' && l.server === server).map((l) => l.pid as number);
  const names = async () => (await client.listTools()).tools.map((t) => t.name);

  beforeAll(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'bundle-e2e-'));
    const config = join(dir, 'servers.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          'ev-a': { command: process.execPath, args: [everythingBin, 'stdio'], env: { WHICH_COPY: 'copy-a' }, label: 'Everything A' },
          'ev-b': { command: process.execPath, args: [everythingBin, 'stdio'], env: { WHICH_COPY: 'copy-b' } },
          memory: { command: process.execPath, args: [memoryBin], env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } },
          // notify-mcp itself, zero-configuration (every channel in dry run), data in the temp dir.
          notify: { command: process.execPath, args: [notifyCli], env: { NOTIFY_DATA_DIR: join(dir, 'notify-data') } },
        },
      }),
    );
    transport = new StdioClientTransport({
      command: process.execPath,
      // The servers file as a positional: the form that works behind the MCP Inspector.
      args: [notifyCli, 'bundle', config],
      stderr: 'pipe',
    });
    let buf = '';
    transport.stderr!.on('data', (chunk: Buffer) => {
      buf += chunk.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          logs.push(JSON.parse(line) as LogLine);
        } catch {
          nonJsonStderr.push(line);
        }
      }
    });
    client = countingClient('bundle-e2e', era, () => void listChanged++);
    client.onerror = (e) => void clientErrors.push(e);
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe(era);
  });

  afterAll(async () => {
    const pids = ['ev-a', 'ev-b', 'memory', 'notify'].flatMap(upstreamPids);
    await client?.close();
    // Closing our end stops the gateway, and the gateway stops every upstream it started.
    if (pids.length) await until('upstreams to exit', () => pids.every((p) => !alive(p)) || undefined, 10_000);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists every upstream tool once, prefixing only colliding names, with provenance tags', async () => {
    const { tools } = await client.listTools();
    const all = tools.map((t) => t.name);
    const evA = all.filter((n) => n.startsWith('ev-a__'));
    const evB = all.filter((n) => n.startsWith('ev-b__'));
    expect(evA.length).toBeGreaterThanOrEqual(10);
    expect(evB.map((n) => n.slice('ev-b__'.length))).toEqual(evA.map((n) => n.slice('ev-a__'.length)));
    expect(all).toEqual(expect.arrayContaining(['ev-a__echo', 'ev-b__echo', 'ev-a__get-env', 'read_graph', 'create_entities']));
    expect(all.filter((n) => !n.startsWith('ev-'))).not.toContain('echo');
    for (const n of all) expect(n).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(new Set(all).size).toBe(all.length);
    const desc = (n: string) => tools.find((t) => t.name === n)!.description!;
    expect(desc('ev-a__echo')).toMatch(/^\[Everything A\] /);
    expect(desc('ev-b__echo')).toMatch(/^\[ev-b\] /);
    // Every tool says its server, colliding or not: an upstream's own text cannot.
    expect(desc('read_graph')).toMatch(/^\[memory\][ \n]/);
    for (const t of tools) expect(t.description).toMatch(/^\[(Everything A|ev-b|memory|notify)\]/);
    // Same list twice: deterministic.
    expect(await names()).toEqual(all);
    // Upstream stderr went into our JSON log (stderr), not to the client's stdout: notify-mcp's
    // JSON lines as objects with the upstream's id added, never as escaped strings.
    const fromNotify = logs.filter((l) => l.upstream === 'notify');
    expect(fromNotify.find((l) => l.msg === 'serving stdio')).toMatchObject({
      level: 'info',
      upstream: 'notify',
      version: expect.any(String),
    });
    expect(fromNotify.every((l) => typeof l.time === 'string' && typeof l.level === 'string')).toBe(true);
    expect(logs.filter((l) => typeof l.msg === 'string' && l.msg.trimStart().startsWith('{'))).toEqual([]);
    expect(nonJsonStderr).toEqual([]);
    expect(clientErrors).toEqual([]);
    // The 2025-only upstreams were reached over 2025-11-25, notify-mcp over 2026-07-28.
    const eraOf = (server: string) => logs.find((l) => l.msg === 'upstream connected' && l.server === server)?.era;
    expect(['ev-a', 'ev-b', 'memory'].map(eraOf)).toEqual(['legacy', 'legacy', 'legacy']);
    expect(eraOf('notify')).toBe('modern');
    // Each tool's schema hash was logged at registration.
    expect(logs.filter((l) => l.msg === 'bundle tool registered' && (l.server === 'memory' || l.server === 'notify')).length).toBe(
      all.filter((n) => !n.startsWith('ev-')).length,
    );
  });

  it('routes each call to the right upstream under its original name', async () => {
    expect(textOf(await client.callTool({ name: 'ev-a__echo', arguments: { message: 'hi a' } }))).toBe('Echo: hi a');
    expect(textOf(await client.callTool({ name: 'ev-b__echo', arguments: { message: 'hi b' } }))).toBe('Echo: hi b');
    // get-env shows which process answered.
    const envA = textOf(await client.callTool({ name: 'ev-a__get-env', arguments: {} }));
    const envB = textOf(await client.callTool({ name: 'ev-b__get-env', arguments: {} }));
    expect(envA).toContain('copy-a');
    expect(envA).not.toContain('copy-b');
    expect(envB).toContain('copy-b');
    // memory keeps state across calls
    await client.callTool({
      name: 'create_entities',
      arguments: { entities: [{ name: 'bundle', entityType: 'test', observations: ['routed'] }] },
    });
    const graph = (await client.callTool({ name: 'read_graph', arguments: {} })) as CallToolResult;
    expect(graph.isError).toBeFalsy();
    expect(graph.structuredContent).toMatchObject({ entities: [{ name: 'bundle', entityType: 'test' }] });
  });

  it('answers an unknown name with an error result listing the available names', async () => {
    const r = (await client.callTool({ name: 'echo', arguments: { message: 'x' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^Unknown tool "echo"\. Available tools: /);
    expect(textOf(r)).toContain('ev-a__echo');
    expect(textOf(r)).toContain('read_graph');
  });

  it('removes a killed upstream, emits list_changed, errors its calls, and reconnects', async () => {
    const [oldPid] = upstreamPids('ev-b');
    expect(oldPid).toBeGreaterThan(0);
    const changesBefore = listChanged;
    process.kill(oldPid!, 'SIGKILL');

    await until('ev-b tools to disappear', async () => !(await names()).some((n) => n.startsWith('ev-b__')) || undefined);
    expect(listChanged).toBeGreaterThan(changesBefore);
    // Without the second copy nothing collides: ev-a's tools are listed under their own names.
    const during = await names();
    expect(during).toContain('echo');
    expect(during).not.toContain('ev-a__echo');
    const r = (await client.callTool({ name: 'ev-b__echo', arguments: { message: 'x' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('Available tools:');
    expect(logs.some((l) => l.msg === 'upstream down' && l.server === 'ev-b')).toBe(true);

    // Backoff 200 ms: it comes back, under a new process, and the prefixes return.
    const newPid = await until('ev-b to reconnect', () => upstreamPids('ev-b').find((p) => p !== oldPid));
    expect(newPid).not.toBe(oldPid);
    await until('ev-b tools to return', async () => (await names()).includes('ev-b__echo') || undefined);
    const changesAfter = listChanged;
    expect(changesAfter).toBeGreaterThanOrEqual(changesBefore + 2);
    expect(textOf(await client.callTool({ name: 'ev-b__get-env', arguments: {} }))).toContain('copy-b');
    expect(textOf(await client.callTool({ name: 'ev-a__echo', arguments: { message: 'back' } }))).toBe('Echo: back');
    expect(clientErrors).toEqual([]);
  });

  it('routes to notify-mcp itself: send_notification in dry run, structured result intact', async () => {
    const all = await names();
    expect(all).toEqual(expect.arrayContaining(['send_notification', 'show_banner', 'dismiss_banner', 'list_banners']));
    const r = (await client.callTool({
      name: 'send_notification',
      arguments: { via: 'slack', channel: '#ops', text: 'from the bundle' },
    })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ via: 'slack', status: 'dry_run' });
    // A validation error from notify-mcp comes back as its own error result, untouched.
    const bad = (await client.callTool({ name: 'send_notification', arguments: { via: 'pigeon' } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.structuredContent ?? bad.content)).toContain('INVALID_VIA');
  });
});

describe('notify-mcp bundle gateway (--http, with a Streamable HTTP upstream)', () => {
  let dir: string;
  let upstream: ChildProcess | undefined;
  let upstreamPort: number;
  let gateway: ChildProcess;
  let gatewayUrl: URL;
  const clients = {} as Record<Era, Client>;
  const listChanged: Record<Era, number> = { legacy: 0, modern: 0 };

  async function startUpstream(): Promise<ChildProcess> {
    const child = spawn(process.execPath, [everythingBin, 'streamableHttp'], {
      env: { ...process.env, PORT: String(upstreamPort) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    await until('the HTTP upstream to listen', () => err.includes('listening') || undefined);
    return child;
  }
  const names = async (era: Era = 'legacy') => (await clients[era].listTools()).tools.map((t) => t.name);

  beforeAll(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'bundle-http-'));
    upstreamPort = await freePort();
    upstream = await startUpstream();
    const config = join(dir, 'servers.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          remote: { url: `http://127.0.0.1:${upstreamPort}/mcp`, label: 'Remote' },
          local: { command: process.execPath, args: [everythingBin, 'stdio'] },
        },
      }),
    );
    gateway = spawn(process.execPath, [notifyCli, 'bundle', '--servers', config, '--http', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let gwErr = '';
    gateway.stderr!.on('data', (c: Buffer) => (gwErr += c.toString()));
    gatewayUrl = new URL(await until('the gateway URL', () => /"url":"(http:[^"]+)"/.exec(gwErr)?.[1]));
    for (const era of ERAS) {
      clients[era] = countingClient(`bundle-http-${era}`, era, () => void listChanged[era]++);
      await clients[era].connect(new StreamableHTTPClientTransport(gatewayUrl));
      expect(clients[era].getProtocolEra()).toBe(era);
    }
  });

  afterAll(async () => {
    await Promise.all(ERAS.map((era) => clients[era]?.close().catch(() => {})));
    if (gateway && gateway.exitCode === null) {
      const exited = new Promise((r) => gateway.once('exit', r));
      gateway.kill('SIGTERM'); // the gateway stops its stdio upstream on the way out
      await exited;
    }
    upstream?.kill('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(ERAS)('serves the reconciled tools over HTTP and forwards to the HTTP upstream (%s client)', async (era) => {
    const all = await names(era);
    expect(all).toContain('remote__echo');
    expect(all).toContain('local__echo');
    expect(textOf(await clients[era].callTool({ name: 'remote__echo', arguments: { message: 'over http' } }))).toBe('Echo: over http');
  });

  it('notices a dead HTTP upstream at the next call, drops its tools, and reconnects', async () => {
    upstream!.kill('SIGKILL');
    await until('the upstream to exit', () => upstream!.exitCode !== null || upstream!.signalCode !== null || undefined);
    const before = { ...listChanged };
    const r = (await clients.legacy.callTool({ name: 'remote__echo', arguments: { message: 'x' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    await until('remote tools to disappear', async () => !(await names()).includes('remote__echo') || undefined);
    // Both eras hear of it: the 2025 session by notification, the 2026 client on its listen stream.
    await until('list_changed over HTTP', () => ERAS.every((era) => listChanged[era] > before[era]) || undefined);
    expect(await names('modern')).toContain('echo'); // local's tools no longer collide

    upstream = await startUpstream();
    await until('remote tools to return', async () => (await names()).includes('remote__echo') || undefined);
    for (const era of ERAS) {
      expect(textOf(await clients[era].callTool({ name: 'remote__echo', arguments: { message: 'again' } }))).toBe('Echo: again');
    }
  });

  it('refuses a foreign Host header (DNS rebinding)', async () => {
    const res = await new Promise<number>((done, fail) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: gatewayUrl.port,
          path: '/mcp',
          method: 'POST',
          headers: { host: 'evil.example', 'content-type': 'application/json' },
        },
        (r) => {
          r.resume();
          done(r.statusCode ?? 0);
        },
      );
      req.on('error', fail);
      req.end('{}');
    });
    expect(res).toBe(403);
  });
});
