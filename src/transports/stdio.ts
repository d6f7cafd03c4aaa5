/**
 * stdio: one connection over the process's streams (injectable, so tests need no
 * subprocess). stdout carries JSON-RPC only.
 */
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { App } from '../app.js';
import { createServer } from '../server.js';

export async function serveStdio(app: App, streams: { stdin?: Readable; stdout?: Writable } = {}): Promise<{ closed: Promise<void> }> {
  const server = createServer(app);
  const transport = new StdioServerTransport(streams.stdin, streams.stdout);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    // EOF: answer what is in flight, then close.
    (streams.stdin ?? process.stdin).once('end', () => void app.drain().finally(() => server.close()));
  });
  await server.connect(transport);
  return { closed };
}
