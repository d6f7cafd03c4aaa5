import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Logger } from '../log.js';
import { UpstreamUnavailableError } from './errors.js';
import { createGatewayServer } from './gateway-server.js';
import { loopbackHost, serveHttp, type HttpGateway } from './gateway-http.js';
import { BundleManager } from './manager.js';
import { loadServersConfig } from './servers-config.js';
import { DEFAULT_BACKOFF, Upstream, type BackoffOptions } from './upstream.js';

export interface GatewayOptions {
  /** The `mcpServers` JSON file. */
  configPath: string;
  /** Serve Streamable HTTP at `/mcp` on this address (loopback only) instead of stdio. */
  http?: { port: number; host: string };
  log: Logger;
  /** stdio mode: defaults to process.stdin / process.stdout. */
  stdin?: Readable;
  stdout?: Writable;
  /** Reconnect delays; default 500 ms doubling to 10 s. */
  backoff?: BackoffOptions;
  /** Ping interval of HTTP upstreams; default 15 s. */
  healthIntervalMs?: number;
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

  const manager = new BundleManager({
    log,
    serverTimeoutMs: (serverId) => specs.get(serverId)?.timeoutMs,
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
        hooks: {
          onTools: (id, tools) => manager.register(id, tools, spec.label !== undefined ? { label: spec.label } : {}),
          onDown: (id) => void manager.unregister(id),
        },
      }),
    );
  }
  await Promise.all([...upstreams.values()].map((u) => u.start()));
  log.info('bundle ready', {
    upstreams: [...upstreams.values()].map((u) => `${u.serverId}:${u.connected ? 'up' : 'retrying'}`),
    tools: manager.current.reconciled.tools.length,
    fingerprint: manager.fingerprint,
  });

  let stdioServer: Server | undefined;
  let http: HttpGateway | undefined;
  const liveServers = (): Server[] => (http ? http.servers() : stdioServer ? [stdioServer] : []);
  manager.onChange((state) => {
    log.info('bundle tool list changed', { fingerprint: state.fingerprint, tools: state.reconciled.tools.length });
    for (const server of liveServers()) {
      server.sendToolListChanged().catch((err: unknown) => {
        log.warn('bundle list_changed not delivered', { error: err instanceof Error ? err.message : String(err) });
      });
    }
  });

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await Promise.all([...upstreams.values()].map((u) => u.close()));
      await stdioServer?.close().catch(() => {});
      await http?.close();
      log.info('bundle stopped');
      resolveClosed();
    })());

  try {
    if (options.http) {
      http = await serveHttp(options.http, () => createGatewayServer(manager), log);
      log.info('bundle serving http', { url: http.url });
    } else {
      const stdin = options.stdin ?? process.stdin;
      const stdout = options.stdout ?? process.stdout;
      stdioServer = createGatewayServer(manager);
      await stdioServer.connect(new StdioServerTransport(stdin, stdout));
      // The SDK's stdio transport does not close when its input ends; the client going
      // away is our signal to stop the upstreams.
      stdin.once('end', () => void close());
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
