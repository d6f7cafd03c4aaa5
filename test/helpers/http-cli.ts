/**
 * The built CLI as `notify-mcp --http --port 0`: started, its bound URL read from the
 * `serving http` log line, and stopped with SIGTERM as an operator would.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { CLI } from './cli.js';
import { assertBuilt } from './mcp-cli.js';

export interface HttpCli {
  child: ChildProcessWithoutNullStreams;
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** The server's origin, `http://127.0.0.1:<port>`. */
  origin: string;
  stderr(): string;
  stop(): Promise<void>;
}

export async function startHttpCli(env: Record<string, string>, args: string[] = []): Promise<HttpCli> {
  assertBuilt();
  const child = spawn(process.execPath, [CLI, '--http', '--port', '0', ...args], { env, stdio: 'pipe' });
  child.stdin.end();
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "serving http" line: ${stderr}`)), 15_000);
    child.once('exit', (code) => reject(new Error(`the CLI exited ${code}: ${stderr}`)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const m = /"msg":"serving http","url":"([^"]+)"/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  return {
    child,
    url,
    origin: new URL(url).origin,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
