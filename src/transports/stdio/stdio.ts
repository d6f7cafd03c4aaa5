/**
 * stdio: one connection over the process's streams (injectable, so tests need no
 * subprocess), served by the v2 SDK's serveStdio, which picks the connection's era from its
 * first requests: `initialize` pins 2025-11-25 and a request carrying the `_meta` envelope
 * pins 2026-07-28, but `server/discover` only probes: an `initialize` after it is answered
 * too, and pins 2025-11-25 (a client's fallback when discovery did not suit it). One server
 * instance from our factory answers the pinned era. stdout carries JSON-RPC only. Each line
 * is screened and parsed once (stdio-wire.ts, stdio-lines.ts); the CLI's early reader may
 * have answered the opening requests already (early-reader.ts).
 */
import type { Readable, Writable } from 'node:stream';
import { serveStdio as serveStdioEntry } from '@modelcontextprotocol/server/stdio';
import type { Server } from '@modelcontextprotocol/server';
import type { App } from '../../mcp/server.js';
import { feedRefusalMessage, listenedUris, ResourceWatch, withheldListenMessage } from '../../mcp/resources.js';
import { bannerResourcesOffered } from '../../mcp/tool-groups.js';
import { FeedRefusal } from '../../banners/feed-errors.js';
import { STDIO_FEED_CLIENT } from '../../banners/feed-client.js';
import { bannerHubFor } from '../../banners/hub.js';
import { createServer } from '../../mcp/server.js';
import { earlyReaderOn } from './early-reader.js';
import { StdioWire } from './stdio-wire.js';

export interface StdioOptions {
  stdin?: Readable;
  stdout?: Writable;
  /** A longer message is refused (default: the configured cap, Config.messageCap, as over HTTP). */
  maxMessageBytes?: number;
}

export async function serveStdio(app: App, options: StdioOptions = {}): Promise<{ closed: Promise<void> }> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  // 2026-07-28 resource subscriptions: the SDK's entry answers subscriptions/listen and routes
  // the pinned server's notifications/resources/updated onto the listens that named the URI;
  // the lines show us which URIs to watch, and until when (notifications/cancelled).
  let modernServer: Server | undefined;
  const watch = new ResourceWatch(
    bannerHubFor(app.store, { log: app.log }),
    (uri) => void modernServer?.sendResourceUpdated({ uri }).catch(() => {}),
  );
  const listens = new Map<unknown, Promise<() => void>>();
  const onMessage = (message: unknown) => {
    const m = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
    const uris = listenedUris(m);
    if (uris.length > 0 && !bannerResourcesOffered(app.config.tools.groups)) return withheldListenMessage(m.id);
    if (uris.length > 0) {
      // Refused here, the listen never reaches the SDK, which would answer it as honoured.
      try {
        const held = watch.acquire(uris, STDIO_FEED_CLIENT);
        held.catch((err: unknown) => app.log.warn('banner listen failed', { error: err instanceof Error ? err.message : String(err) }));
        listens.set(m.id, held);
      } catch (err) {
        if (err instanceof FeedRefusal) return feedRefusalMessage(m.id, err);
        throw err;
      }
    }
    if (m.method === 'notifications/cancelled') endListen(m.params?.requestId);
  };
  const endListen = (id: unknown) => {
    const held = listens.get(id);
    if (held === undefined) return;
    listens.delete(id);
    void held.then(
      (release) => release(),
      () => {},
    );
  };
  // A listen the SDK answers (an error, or its end) is over: its watch ends with it.
  const onSend = (message: object) => {
    if ('id' in message && ('result' in message || 'error' in message)) endListen(message.id);
  };
  const transport = new StdioWire(stdin, stdout, {
    maxLineBytes: options.maxMessageBytes ?? app.config.messageCap.bytes,
    capWhy: options.maxMessageBytes === undefined ? app.config.messageCap.why : undefined,
    log: app.log,
    onMessage,
    onSend,
    early: earlyReaderOn(stdin),
  });
  const handle = serveStdioEntry(
    ({ era }) => {
      const server = createServer(app, {}, era);
      if (era === 'modern') modernServer = server;
      return server;
    },
    {
      transport,
      onerror: (error) => app.log.warn('stdio transport error', { error: error.message }),
    },
  );
  const closed = new Promise<void>((resolve) => {
    // The SDK's own transport closes at end of input and drops the calls still running; a
    // client may close its side right after writing its last request, so they are answered
    // first. The SDK dispatches what it was handed before the next turn of the event loop,
    // where the calls are tracked.
    transport.whenInputEnds(() => {
      transport.endOfInput();
      setImmediate(
        () =>
          void app.drain().finally(() => {
            watch.releaseAll();
            void handle.close().finally(resolve);
          }),
      );
    });
  });
  return { closed };
}
