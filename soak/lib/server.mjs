/**
 * The server under test: the built `dist/cli.js --http` as a child process on a free port,
 * its stderr kept (JSON log lines), and its RSS sampled from /proc while it runs.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');

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

export async function startServer(name, env) {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, '--http', '--port', String(port)], {
    env: { PATH: process.env.PATH ?? '', HOME: env.NOTIFY_DATA_DIR ?? process.env.HOME, NOTIFY_LOG_LEVEL: 'warn', ...env },
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
  if (exited) throw new Error(`${name} exited at start (${exited.code ?? exited.signal}): ${logLines.slice(-5).join('\n')}${buffer}`);
  const url = `${base}/mcp`;
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
    logLines,
    tail,
    exited: () => exited,
    async stop() {
      clearInterval(sampler);
      if (exited) return exited;
      child.kill('SIGTERM');
      return new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
    },
  };
}
