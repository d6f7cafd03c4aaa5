/**
 * Running the built CLI as a user would: a child process with a controlled environment
 * (nothing inherited but PATH and HOME, so a developer's DATABASE_URL or tokens never
 * leak in), and an MCP client transport that also records every raw stdout line.
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';

export const ROOT = resolve(import.meta.dirname, '../..');
export const CLI = join(ROOT, 'dist/cli.js');

export function tempDataDir(prefix = 'notify-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...extra };
}

/** Spawns `node dist/cli.js …` and speaks MCP over its stdio, keeping every stdout line. */
export class ChildStdioTransport implements Transport {
  readonly child: ChildProcessWithoutNullStreams;
  readonly stdoutLines: string[] = [];
  stderr = '';
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  private buffer = '';

  constructor(args: string[], env: Record<string, string>) {
    this.child = spawn(process.execPath, [CLI, ...args], { env, stdio: 'pipe' });
  }

  async start(): Promise<void> {
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        this.stdoutLines.push(line);
        try {
          this.onmessage?.(JSONRPCMessageSchema.parse(JSON.parse(line)) as JSONRPCMessage);
        } catch (err) {
          this.onerror?.(err as Error);
        }
      }
    });
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.child.on('exit', () => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.child.stdin.write(JSON.stringify(message) + '\n');
  }

  /** Set when close() had to kill the child: it did not exit on its own after its stdin ended. */
  killedAtClose = false;

  /**
   * Ends stdin and waits for the child to exit on its own (the CLI drains and exits), at
   * most `timeoutMs`: past that it is killed, so no suite hangs on it; `killedAtClose` says so.
   */
  async close(timeoutMs = 15_000): Promise<void> {
    // A child ended by a signal has a signalCode and no exitCode: it will emit no more 'exit'.
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin.end();
    const timer = setTimeout(() => {
      this.killedAtClose = true;
      this.child.kill('SIGKILL');
    }, timeoutMs);
    await exited;
    clearTimeout(timer);
  }
}

/** Runs the CLI to completion and returns its output. */
export function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('exit', (code) => resolvePromise({ code, stdout, stderr }));
  });
}
