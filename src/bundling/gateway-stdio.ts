import type { Readable, Writable } from 'node:stream';
import type { Server } from '@modelcontextprotocol/server';
import { serveStdio, type StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import type { Logger } from '../core/log.js';
import { MAX_BODY_BYTES } from '../transports/body.js';
import { StdioWire } from '../transports/stdio/stdio-wire.js';

export interface StdioGatewayOptions {
  stdin: Readable;
  stdout: Writable;
  log: Logger;
  /** Builds one SDK server per connection (serveStdio also builds a probe it discards). */
  createServer: () => Server;
  /** Called when the client goes away: the gateway stops its upstreams. */
  onEnd: () => void;
}

export interface StdioGateway {
  handle: StdioServerHandle;
  /** The instances serveStdio built (the connection's, and a discarded probe's). */
  servers: ReadonlySet<Server>;
  /** Lets go of the input, which a signal leaves open and read. */
  releaseInput(): void;
}

/** The gateway's stdio side: one client on the process's own input and output. */
export function serveGatewayStdio(options: StdioGatewayOptions): StdioGateway {
  const { stdin, stdout, log } = options;
  // Screened: the SDK's transport would close on an oversized line (stopping every
  // upstream) and drop a batch or a non-JSON-RPC line without an answer.
  const wire = new StdioWire(stdin, stdout, { maxLineBytes: MAX_BODY_BYTES, log });
  const servers = new Set<Server>();
  let handle: StdioServerHandle;
  try {
    handle = serveStdio(
      () => {
        const server = options.createServer();
        servers.add(server);
        return server;
      },
      {
        transport: wire,
        onerror: (error) => log.warn('bundle stdio error', { error: error.message }),
      },
    );
  } catch (err) {
    void wire.close();
    throw err;
  }
  // The client going away is our signal to stop the upstreams.
  stdin.once('end', () => {
    wire.endOfInput();
    options.onEnd();
  });
  stdin.once('close', () => options.onEnd());
  // Stopped by a signal, the input is still open and read: let go of it, or it keeps the
  // process alive after every upstream is gone.
  return { handle, servers, releaseInput: () => void wire.close() };
}

/** Tells every stdio connection that the tool list changed. */
export function stdioToolsChanged(servers: Iterable<Server>, log: Logger): void {
  // An older-protocol connection gets the notification; on a newer one serveStdio delivers
  // it on the client's subscriptions/listen stream.
  for (const server of servers) {
    if (!server.transport) continue;
    server.sendToolListChanged().catch((err: unknown) => {
      log.warn('bundle list_changed not delivered', { error: err instanceof Error ? err.message : String(err) });
    });
  }
}
