/**
 * Prism serving the vendors' own API descriptions (test/fixtures/provider-specs, vendored
 * unmodified) on a free loopback port. One Prism per spec per test file: each takes about
 * 5 s to start. Without the specs or Prism a suite skips and says so on stderr; in CI
 * (CI=true) it fails instead, as the browser suites do.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const specsDir = path.join(repoRoot, 'test/fixtures/provider-specs');
const prismCli = path.join(repoRoot, 'test/node_modules/@stoplight/prism-cli/dist/index.js');

const SPEC_FILES = ['make-prism-specs.mjs', 'twilio_api_v2010.json', 'slack_web_openapi_v2.json'];

/** Why the Prism contract tests cannot run here, whatever the environment, or undefined when they can. */
export function prismMissing(dir = specsDir, cli = prismCli): string | undefined {
  const absent = SPEC_FILES.filter((f) => !existsSync(path.join(dir, f)));
  if (absent.length > 0) return `the vendor specs ${absent.join(', ')} are missing from ${dir}; the Prism contract tests need them`;
  if (!existsSync(cli)) return `@stoplight/prism-cli is not installed (${cli}); npm test installs it (test/package.json)`;
  return undefined;
}

/**
 * Why a Prism suite skips, or undefined when it runs. Says so on stderr; throws under
 * CI=true, where a missing spec or Prism is a broken checkout, not a reason to go green.
 */
export function prismUnavailableReason(
  env: Readonly<Record<string, string | undefined>> = process.env,
  missing = prismMissing(),
): string | undefined {
  if (missing === undefined) return undefined;
  if (env.CI === 'true') throw new Error(`Prism contract tests cannot run in CI: ${missing}`);
  process.stderr.write(`Prism contract tests SKIPPED: ${missing}\n`);
  return missing;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A provider's request timeout against Prism. Prism checks each request against the whole
 * published spec: at load 12 one Slack request took over 5 s (a failed run of five). These
 * tests check shapes, not speed; the budget tests time sends against local fakes.
 */
export const PRISM_REQUEST_TIMEOUT_MS = 20_000;

export interface PrismPeer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts Prism on `which` spec and resolves once it says it is listening. */
export async function startPrism(which: 'twilio' | 'slack', readyTimeoutMs = 45_000): Promise<PrismPeer> {
  const outDir = mkdtempSync(path.join(tmpdir(), `prism-${which}-`));
  execFileSync(process.execPath, [path.join(specsDir, 'make-prism-specs.mjs'), outDir], { stdio: 'ignore' });
  const spec = path.join(outDir, `${which}.prism.json`);

  for (let tries = 0; ; tries++) {
    const port = await freePort();
    const child = spawn(process.execPath, [prismCli, 'mock', '-h', '127.0.0.1', '-p', String(port), spec], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await waitForListening(child, readyTimeoutMs);
    } catch (err) {
      await stopChild(child);
      if (tries < 2 && /EADDRINUSE/.test(String(err))) continue; // the free port was taken meanwhile
      rmSync(outDir, { recursive: true, force: true });
      throw err;
    }
    return {
      origin: `http://127.0.0.1:${port}`,
      pid: child.pid!,
      stop: async () => {
        await stopChild(child);
        rmSync(outDir, { recursive: true, force: true });
      },
    };
  }
}

function waitForListening(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => done(new Error(`Prism did not start within ${timeoutMs} ms:\n${output.slice(-2000)}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) done();
      else if (output.includes('EADDRINUSE')) done(new Error(`EADDRINUSE: ${output.slice(-500)}`));
    };
    const onExit = (code: number | null) => done(new Error(`Prism exited (${code}) before listening:\n${output.slice(-2000)}`));
    function done(err?: Error) {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      // keep draining so a full pipe never blocks Prism
      child.stdout?.resume();
      child.stderr?.resume();
      if (err) reject(err);
      else resolve();
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}
