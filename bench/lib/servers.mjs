/**
 * Starting the two servers under test the same way: notify-mcp (dist/cli.js) and the bare
 * baseline (bench/bare-server.mjs), each as a child process with a controlled environment,
 * reached by the v2 SDK's Client over stdio or Streamable HTTP, as a 2025-11-25 client
 * (`legacy`: initialize, sessions) or a 2026-07-28 one (`modern`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { sleep } from './stats.mjs';

export const ROOT = resolve(import.meta.dirname, '../..');
/** NOTIFY_BENCH_CLI: measure another build (say, a patched copy of dist/) against the same baselines. */
export const CLI = process.env.NOTIFY_BENCH_CLI ? resolve(process.env.NOTIFY_BENCH_CLI) : join(ROOT, 'dist/cli.js');
export const BARE = join(ROOT, 'bench/bare-server.mjs');
export const FLOOR = join(ROOT, 'bench/floor-server.mjs');

const tempDirs = [];
/** `base`: where to make it (default the OS temp dir; /dev/shm to take fsync out of a measure). */
export function tempDir(base = tmpdir()) {
  const dir = mkdtempSync(join(base, 'notify-bench-'));
  tempDirs.push(dir);
  return dir;
}
export function removeTempDirs() {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Nothing inherited but PATH and HOME, so a developer's DATABASE_URL or tokens never leak in. */
export function serverEnv(extra = {}) {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...extra };
}

export function serverCommand(kind) {
  return kind === 'notify' ? [CLI] : kind === 'floor' ? [FLOOR] : [BARE];
}

export const ERAS = ['legacy', 'modern'];
export const MODERN_VERSION = '2026-07-28';

/** A v2 client of that era: the 2025 handshake, or pinned to 2026-07-28. */
export function eraClient(era) {
  return new Client({ name: 'notify-bench', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN_VERSION } } } : {});
}

/**
 * Spawns a server over stdio and returns a connected SDK client. A 2026-07-28 client given
 * `prior` (a DiscoverResult it already holds, as a host caches the era) sends no probe: the
 * SDK would otherwise spend a second process on it.
 */
export async function connectStdio(kind, env, era = 'legacy', prior) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: serverCommand(kind),
    env,
    stderr: 'ignore',
  });
  const client = eraClient(era);
  await client.connect(transport, prior ? { prior: { kind: 'modern', discover: prior } } : undefined);
  if (client.getProtocolEra() !== era) throw new Error(`${kind}: connected as ${client.getProtocolEra()}, not ${era}`);
  return { client, pid: transport.pid, close: () => client.close() };
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux); undefined elsewhere. */
export function processCpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
/** USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

export async function freePort() {
  const srv = createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/** Resolves once anything answers HTTP on the port (any status), or throws after `ms`. */
export async function waitForHttp(port, path = '/', ms = 15_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise((r) => {
      const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
        res.resume();
        r(true);
      });
      req.on('error', () => r(false));
      req.end();
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing answered on 127.0.0.1:${port} within ${ms} ms`);
    await sleep(25);
  }
}

/** Spawns a server in HTTP mode on a free port; returns its port and a stop function. `cli`: another build's cli.js (A/B). */
export async function startHttpServer(kind, env, { mcpPath = '/mcp', cli = CLI } = {}) {
  const port = await freePort();
  const args = kind === 'notify' ? [cli, '--http', '--port', String(port)] : [BARE, '--http', String(port)];
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c) => {
    if (stderr.length < 20_000) stderr += c;
  });
  const exited = new Promise((r) => child.once('exit', (code) => r(code)));
  try {
    await Promise.race([
      waitForHttp(port, kind === 'notify' ? '/healthz' : '/'),
      exited.then((code) => {
        throw new Error(`${kind} --http exited with ${code} before listening: ${stderr.slice(0, 2000)}`);
      }),
    ]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    port,
    pid: child.pid,
    url: new URL(`http://127.0.0.1:${port}${mcpPath}`),
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/** `token`: a bearer token of NOTIFY_HTTP_TOKENS, for a server that requires one. */
export async function connectHttp(url, era = 'legacy', token) {
  const transport = new StreamableHTTPClientTransport(url, token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined);
  const client = eraClient(era);
  await client.connect(transport);
  if (client.getProtocolEra() !== era) throw new Error(`${url}: connected as ${client.getProtocolEra()}, not ${era}`);
  return {
    client,
    async close() {
      if (era === 'legacy') await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}
