import type { Readable, Writable } from 'node:stream';
import type { Server } from '@modelcontextprotocol/server';
import { serveStdio, type StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import type { Logger } from '../core/log.js';
import { MAX_BODY_BYTES } from '../transports/body.js';
import { StdioWire } from '../transports/stdio/stdio-wire.js';
import { GatewayStartError, UpstreamUnavailableError } from './errors.js';
import { createGatewayServer } from './gateway-server.js';
import { loopbackHost, serveHttp, type GatewayHttpOptions, type HttpGateway } from './gateway-http.js';
import { BundleManager } from './manager.js';
import { loadServersConfig } from './servers-config.js';
import { DEFAULT_BACKOFF, failureText, Upstream, type BackoffOptions } from './upstream.js';

export interface GatewayOptions {
  /** The `mcpServers` JSON file. */
  configPath: string;
  /** Serve Streamable HTTP at `/mcp` on this address (loopback only) instead of stdio. */
  http?: GatewayHttpOptions;
  log: Logger;
  /** stdio mode: defaults to process.stdin / process.stdout. */
  stdin?: Readable;
  stdout?: Writable;
  /** Reconnect delays; default 500 ms doubling to 10 s. */
  backoff?: BackoffOptions;
  /** Ping interval of HTTP upstreams; default 15 s. */
  healthIntervalMs?: number;
  /** Where stdio upstreams' stderr lines go (JSON lines, `upstream` added); default our stderr. */
  writeUpstreamStderr?: (line: string) => void;
}

export interface Gateway {
  manager: BundleManager;
  /** Set in HTTP mode. */
  http?: { host: string; port: number; url: string };
  /** Resolves when the gateway has stopped (stdin ended in stdio mode, or `close()`). */
  closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * `notify-mcp bundle`: connect to every upstream in the servers file, then serve their
 * reconciled tools. Resolves once serving (upstreams that failed their first attempt keep
 * retrying in the background). Throws GatewayConfigError for a bad file or address.
 */
export async function runGateway(options: GatewayOptions): Promise<Gateway> {
  const log = options.log.child({ component: 'bundle' });
  if (options.http) loopbackHost(options.http.host); // refuse before starting any upstream
  const specs = await loadServersConfig(options.configPath);
  const upstreams = new Map<string, Upstream>();
  const notServing = () =>
    [...upstreams.values()].flatMap((u) => {
      const failure = u.failure;
      return failure ? [{ serverId: u.serverId, why: failureText(failure) }] : [];
    });

  const manager = new BundleManager({
    log,
    serverIds: specs.keys(),
    // Every served tool says which server it is from: an upstream's own text cannot.
    tagAll: true,
    serverTimeoutMs: (serverId) => specs.get(serverId)?.timeoutMs,
    unavailable: notServing,
    callUpstream: (target, args, callOptions) => {
      const upstream = upstreams.get(target.serverId);
      if (!upstream?.connected) throw new UpstreamUnavailableError(target.serverId);
      return upstream.callTool(target.originalName, args, callOptions);
    },
  });

  for (const [serverId, spec] of specs) {
    upstreams.set(
      serverId,
      new Upstream(serverId, spec, {
        log,
        backoff: options.backoff ?? DEFAULT_BACKOFF,
        ...(options.healthIntervalMs !== undefined ? { healthIntervalMs: options.healthIntervalMs } : {}),
        ...(options.writeUpstreamStderr ? { writeStderr: options.writeUpstreamStderr } : {}),
        hooks: {
          onTools: (id, tools) => manager.register(id, tools, spec.label !== undefined ? { label: spec.label } : {}),
          onDown: (id) => void manager.unregister(id),
        },
      }),
    );
  }
  await Promise.all([...upstreams.values()].map((u) => u.start()));
  // A failed attempt says why a turn later (its process's last stderr lines and exit).
  await new Promise((resolve) => setImmediate(resolve));
  if (upstreams.size > 0 && [...upstreams.values()].every((u) => !u.connected)) {
    const why = notServing().map((d) => `"${d.serverId}" ${d.why}`);
    await Promise.all([...upstreams.values()].map((u) => u.close()));
    throw new GatewayStartError(
      `bundle: no server of ${options.configPath} could start, so there is nothing to serve: ${why.join('; ').replace(/\.$/, '')}.`,
    );
  }
  log.info('bundle ready', {
    upstreams: [...upstreams.values()].map((u) => `${u.serverId}:${u.connected ? 'up' : 'retrying'}`),
    tools: manager.current.reconciled.tools.length,
    fingerprint: manager.fingerprint,
  });

  const instructionsNote = () => {
    const down = notServing();
    return down.length > 0 ? ` Not serving now: ${down.map((d) => `${d.serverId} ${d.why}`).join('; ')}.` : '';
  };

  // stdio: the instances serveStdio built (the connection's, and a discarded probe's).
  const stdioServers = new Set<Server>();
  let stdio: StdioServerHandle | undefined;
  let http: HttpGateway | undefined;
  manager.onChange((state) => {
    log.info('bundle tool list changed', { fingerprint: state.fingerprint, tools: state.reconciled.tools.length });
    http?.toolsChanged();
    // A 2025-era connection gets the notification; on a 2026-07-28 one serveStdio delivers it
    // on the client's subscriptions/listen stream.
    for (const server of stdioServers) {
      if (!server.transport) continue;
      server.sendToolListChanged().catch((err: unknown) => {
        log.warn('bundle list_changed not delivered', { error: err instanceof Error ? err.message : String(err) });
      });
    }
  });

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  let releaseInput: (() => void) | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await Promise.all([...upstreams.values()].map((u) => u.close()));
      await stdio?.close().catch(() => {});
      releaseInput?.();
      await http?.close();
      log.info('bundle stopped');
      resolveClosed();
    })());

  try {
    if (options.http) {
      http = await serveHttp(options.http, () => createGatewayServer(manager, instructionsNote), log);
      log.info('bundle serving http', { url: http.url });
    } else {
      const stdin = options.stdin ?? process.stdin;
      const stdout = options.stdout ?? process.stdout;
      // Screened: the SDK's transport would close on an oversized line (stopping every
      // upstream) and drop a batch or a non-JSON-RPC line without an answer.
      const wire = new StdioWire(stdin, stdout, { maxLineBytes: MAX_BODY_BYTES, log });
      // Stopped by a signal, the input is still open and read: let go of it, or it keeps the
      // process alive after every upstream is gone.
      releaseInput = () => void wire.close();
      stdio = serveStdio(
        () => {
          const server = createGatewayServer(manager, instructionsNote);
          stdioServers.add(server);
          return server;
        },
        {
          transport: wire,
          onerror: (error) => log.warn('bundle stdio error', { error: error.message }),
        },
      );
      // The client going away is our signal to stop the upstreams.
      stdin.once('end', () => {
        wire.endOfInput();
        void close();
      });
      stdin.once('close', () => void close());
    }
  } catch (err) {
    await close();
    throw err;
  }

  const gateway: Gateway = { manager, closed, close };
  if (http) gateway.http = { host: http.host, port: http.port, url: http.url };
  return gateway;
}
