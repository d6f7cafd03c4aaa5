/**
 * stdio: one connection over the process's streams (injectable, so tests need no
 * subprocess), served by the v2 SDK's serveStdio: the opening message pins the connection's
 * era (`initialize` for 2025-11-25; `server/discover` or any request carrying the `_meta`
 * envelope for 2026-07-28) and one server instance from our factory answers it. stdout
 * carries JSON-RPC only.
 */
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { serveStdio as serveStdioEntry, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { App } from '../app.js';
import { createServer } from '../server.js';

export async function serveStdio(app: App, streams: { stdin?: Readable; stdout?: Writable } = {}): Promise<{ closed: Promise<void> }> {
  const stdin = streams.stdin ?? process.stdin;
  // The SDK's transport closes at end of input and drops the calls still running. Ours
  // hides the end until those calls are answered: the client may close its side right
  // after writing its last request.
  const input = new PassThrough();
  stdin.pipe(input, { end: false });
  const transport = new StdioServerTransport(input, streams.stdout ?? process.stdout);
  const handle = serveStdioEntry(({ era }) => createServer(app, {}, era), {
    transport,
    onerror: (error) => app.log.warn('stdio transport error', { error: error.message }),
  });
  const closed = new Promise<void>((resolve) => {
    stdin.once('end', () => void app.drain().finally(() => {
      input.end();
      void handle.close().finally(resolve);
    }));
  });
  return { closed };
}
