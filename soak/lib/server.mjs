/**
 * The server under test: the built `dist/cli.js --http` as a child process on a free port,
 * its stderr kept (JSON log lines), its RSS sampled from /proc while it runs, and its heap
 * sampled from inside by the soak's preload (memprobe.cjs), which forces a full GC every
 * `probe.gcMs` (0: never) so the samples measure memory held, not garbage.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const PROBE = join(ROOT, 'soak/lib/memprobe.cjs');

/** The probe's samples; its file lives outside the data dir, which the SQLite fault fills. */
function readProbe(file) {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

function rssBytes(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitHealthy(base, exited) {
  for (let i = 0; i < 200 && !exited(); i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server at ${base} did not become healthy`);
}

/** `probe`: { gcMs, heapSnapshots } (heapSnapshots: seconds, comma-separated; diagnosis only). */
export async function startServer(name, env, probe) {
  const port = await freePort();
  const probeDir = mkdtempSync(join(tmpdir(), `notify-soak-probe-${name}-`));
  const probeFile = join(probeDir, 'memory.jsonl');
  const child = spawn(process.execPath, [CLI, '--http', '--port', String(port)], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: env.NOTIFY_DATA_DIR ?? process.env.HOME,
      NOTIFY_LOG_LEVEL: 'warn',
      NODE_OPTIONS: `--require ${JSON.stringify(PROBE)}`,
      SOAK_MEMPROBE_FILE: probeFile,
      SOAK_MEMPROBE_GC_MS: String(probe.gcMs),
      SOAK_MEMPROBE_SNAPSHOTS: probe.heapSnapshots,
      // Its own origin: answer links in its messages point here (escalations ask a question).
      NOTIFY_PUBLIC_URL: `http://127.0.0.1:${port}`,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const logLines = [];
  /** The last lines, whatever they are: a crash's stack is not a JSON log line. */
  const tail = [];
  let buffer = '';
  let exited;
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (logLines.length < 20_000) logLines.push(line);
        tail.push(line);
        if (tail.length > 40) tail.shift();
      }
    });
  child.once('exit', (code, signal) => (exited = { code, signal }));
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, () => exited);
  if (exited) rmSync(probeDir, { recursive: true, force: true });
  if (exited) throw new Error(`${name} exited at start (${exited.code ?? exited.signal}): ${logLines.slice(-5).join('\n')}${buffer}`);
  const url = `${base}/mcp`;
  let stoppedAt;
  let loadEndedAt;
  const cleanProbe = (result) => {
    if (!probe.heapSnapshots) rmSync(probeDir, { recursive: true, force: true });
    return result;
  };
  const rss = [];
  const t0 = Date.now();
  const sampler = setInterval(() => {
    const bytes = rssBytes(child.pid);
    if (bytes !== undefined) rss.push({ t: Date.now() - t0, bytes });
  }, 500);
  return {
    name,
    url,
    pid: child.pid,
    rss,
    /** process.memoryUsage() every 0.5 s from inside until stop(); `gc: true` right after a forced full GC. */
    memory: [],
    logLines,
    tail,
    exited: () => exited,
    /** The load is over: memory is measured up to here, not through the wait for scheduled sends that follows. */
    endLoad() {
      clearInterval(sampler);
      loadEndedAt ??= Date.now();
    },
    async stop() {
      clearInterval(sampler);
      if (!stoppedAt) {
        // Up to the end of the load, as the RSS samples: shutdown is not part of the run.
        stoppedAt = loadEndedAt ?? Date.now();
        this.memory = readProbe(probeFile).filter((m) => m.at <= stoppedAt);
        if (probe.heapSnapshots) process.stderr.write(`[soak] ${name}: heap snapshots in ${probeDir}\n`);
      }
      if (exited) return cleanProbe(exited);
      child.kill('SIGTERM');
      return new Promise((r) => child.once('exit', (code, signal) => r(cleanProbe({ code, signal }))));
    },
  };
}

/**
 * The store's audit entries that `keep` takes, oldest first, through `notify-mcp audit export`
 * on `storeEnv` (NOTIFY_DATA_DIR, DATABASE_URL) once the servers are stopped: { entries } or
 * { error }.
 */
export function auditEntries(storeEnv, keep) {
  const r = spawnSync(process.execPath, [CLI, 'audit', 'export'], {
    env: { PATH: process.env.PATH ?? '', HOME: storeEnv.NOTIFY_DATA_DIR, NOTIFY_LOG_LEVEL: 'error', ...storeEnv },
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0) return { error: `exit ${r.status ?? r.signal}: ${(r.stderr ?? r.error?.message ?? '').slice(0, 500)}` };
  const entries = [];
  for (const line of r.stdout.split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line);
    if (keep(e)) entries.push(e);
  }
  return { entries };
}
