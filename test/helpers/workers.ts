/**
 * `notify-mcp worker` processes (the built CLI) for replica tests: each started with its
 * stderr kept (the last 4,000 characters of all of them, for a timeout's message), and all
 * SIGKILLed at `killAll` if a test left them running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI } from './cli.js';

export interface Workers {
  start(env: Record<string, string>): ChildProcess;
  /** Polls `ok` every 50 ms until it holds; past `ms`, fails naming `what` with the workers' last lines. */
  until(what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<void>;
  killAll(): void;
}

export function workerPool(): Workers {
  const children: ChildProcess[] = [];
  let lastStderr = '';
  return {
    start(env) {
      const child = spawn(process.execPath, [CLI, 'worker'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr!.setEncoding('utf8').on('data', (c: string) => (lastStderr = (lastStderr + c).slice(-4000)));
      children.push(child);
      return child;
    },
    async until(what, ok, ms) {
      const end = Date.now() + ms;
      while (!(await ok())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}; the workers' last lines:\n${lastStderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    killAll() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    },
  };
}
