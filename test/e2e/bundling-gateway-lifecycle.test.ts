/**
 * The bundle gateway's hold on its upstream processes, as a real process (`node dist/cli.js
 * bundle`; `npm test` builds first), spoken to in plain JSON-RPC lines. The upstreams are
 * test/fixtures/stubborn-upstream.mjs: they outlive the end of their stdin, and one ignores
 * SIGTERM too, so they are gone afterwards only if the gateway killed them. (Upstreams that
 * exit when their stdin closes would also vanish when the gateway merely died, which proves
 * nothing.) Also: a per-server `timeoutMs` ends a call the upstream never answers.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const cli = join(root, 'dist/cli.js');
const fixture = join(root, 'test/fixtures/stubborn-upstream.mjs');

/** True while the process exists and has not exited (a zombie awaiting its reaper is gone). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
  }
  try {
    process.kill(pid, 0); // no /proc: ask the kernel
    return true;
  } catch {
    return false;
  }
}

async function until<T>(what: string, probe: () => T | undefined | false, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

type Message = { id?: number; result?: any; error?: { message: string } };

/** `node dist/cli.js bundle --config …` with a line-based JSON-RPC client on its stdio. */
class GatewayProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly messages: Message[] = [];
  stderr = '';
  private nextId = 1;

  constructor(config: string) {
    this.child = spawn(process.execPath, [cli, 'bundle', '--config', config], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() },
      stdio: 'pipe',
    });
    let buf = '';
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buf += chunk;
      for (let nl; (nl = buf.indexOf('\n')) >= 0; buf = buf.slice(nl + 1)) {
        this.messages.push(JSON.parse(buf.slice(0, nl)) as Message);
      }
    });
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  notify(method: string, params: object = {}): void {
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method, params }) + '\n');
  }

  async request(method: string, params: object = {}, ms = 15_000): Promise<any> {
    const id = this.nextId++;
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    const answer = await until(
      `the answer to ${method} (stderr: ${this.stderr.slice(-500)})`,
      () => this.messages.find((m) => m.id === id),
      ms,
    );
    if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
    return answer.result;
  }

  async initialize(): Promise<void> {
    await this.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'lifecycle-test', version: '1.0.0' },
    });
    this.notify('notifications/initialized');
  }
}

let dir: string;
const started: GatewayProcess[] = [];
const pidFiles: string[] = [];

const pidsIn = (file: string): number[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) : []);

/** Two stubborn upstreams; `stubborn` also ignores SIGTERM and has a 500 ms call bound. */
function writeConfig(name: string): { config: string; pidFile: string } {
  const pidFile = join(dir, `${name}.pids`);
  pidFiles.push(pidFile);
  const config = join(dir, `${name}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        deaf: { command: process.execPath, args: [fixture], env: { PID_FILE: pidFile } },
        stubborn: {
          command: process.execPath,
          args: [fixture],
          env: { PID_FILE: pidFile, IGNORE_SIGTERM: '1' },
          timeoutMs: 500,
        },
      },
    }),
  );
  return { config, pidFile };
}

async function startGateway(name: string): Promise<{ gateway: GatewayProcess; pids: number[] }> {
  const { config, pidFile } = writeConfig(name);
  const gateway = new GatewayProcess(config);
  started.push(gateway);
  await gateway.initialize();
  const { tools } = (await gateway.request('tools/list')) as { tools: { name: string }[] };
  expect(tools.map((t) => t.name)).toEqual(['deaf__echo', 'deaf__hang', 'stubborn__echo', 'stubborn__hang']);
  const pids = pidsIn(pidFile);
  // Both upstreams are up; more pids may have been started (and ended) on the way.
  expect(pids.filter(running).length).toBeGreaterThanOrEqual(2);
  return { gateway, pids };
}

/** The gateway exits, and then no upstream process it ever started is left. */
async function expectAllStopped(gateway: GatewayProcess, pids: number[]): Promise<void> {
  // Bounded by the stop sequence: stdin end, 2 s, SIGTERM, 2 s, SIGKILL.
  await until('the gateway to exit', () => gateway.exited, 20_000).catch((err: Error) => {
    throw new Error(`${err.message}; upstreams still running: ${pids.filter(running).join(', ') || 'none'}`);
  });
  // The gateway reaped each child before exiting; a short grace covers a slow reaper.
  await until('the upstreams to be gone', () => pids.every((p) => !running(p)), 2_000).catch(() => {});
  expect(pids.filter(running)).toEqual([]);
  expect(gateway.child.exitCode).toBe(0);
}

beforeAll(() => {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first`);
  dir = mkdtempSync(join(tmpdir(), 'bundle-lifecycle-'));
  return () => rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  // Whatever a failed test left behind.
  for (const g of started.splice(0)) if (!g.exited) g.child.kill('SIGKILL');
  for (const pid of pidFiles.splice(0).flatMap(pidsIn)) if (running(pid)) process.kill(pid, 'SIGKILL');
});

describe('notify-mcp bundle: upstream processes end with the gateway', () => {
  it('ends a call its upstream never answers at the server timeoutMs, and kills every upstream when stdin ends', async () => {
    const { gateway, pids } = await startGateway('stdin-end');

    const hung = await gateway.request('tools/call', { name: 'stubborn__hang', arguments: {} });
    expect(hung.isError).toBe(true);
    expect(hung.content[0].text).toContain('timed out after 500 ms on server "stubborn"');
    // The upstream was told (its stderr reaches the gateway's log), and still serves.
    await until('the cancellation to reach the upstream', () => /cancelled \d+/.test(gateway.stderr), 5_000);
    const echo = await gateway.request('tools/call', { name: 'stubborn__echo', arguments: { text: 'still here' } });
    expect(echo.content[0].text).toBe('echo: still here');

    gateway.child.stdin.end(); // the client goes away
    await expectAllStopped(gateway, pids);
  });

  it('kills every upstream on SIGTERM', async () => {
    const { gateway, pids } = await startGateway('sigterm');
    gateway.child.kill('SIGTERM');
    await expectAllStopped(gateway, pids);
  });
});
