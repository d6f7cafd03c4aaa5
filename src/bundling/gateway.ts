import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../core/log.js';
import { GatewayStartError, UpstreamUnavailableError } from './errors.js';
import { createGatewayServer } from './gateway-server.js';
import { loopbackHost, serveHttp, type GatewayHttpOptions, type HttpGateway } from './gateway-http.js';
import { BundleManager } from './manager.js';
import { loadServersConfig, type UpstreamSpec } from './servers-config.js';
import { serveGatewayStdio, stdioToolsChanged, type StdioGateway } from './gateway-stdio.js';
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
  /** Reconnect delays; default DEFAULT_BACKOFF. */
  backoff?: BackoffOptions;
  /** Ping interval of HTTP upstreams; default the Upstream's own. */
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

type Upstreams = ReadonlyMap<string, Upstream>;

/** The upstreams not serving now, each with why. */
function notServing(upstreams: Upstreams): { serverId: string; why: string }[] {
  return [...upstreams.values()].flatMap((u) => {
    const failure = u.failure;
    return failure ? [{ serverId: u.serverId, why: failureText(failure) }] : [];
  });
}

/**
 * The manager over `upstreams`, which it reads at each call: the map is filled after, since
 * each upstream reports its tools to this manager.
 */
function createManager(specs: ReadonlyMap<string, UpstreamSpec>, upstreams: Upstreams, log: Logger): BundleManager {
  return new BundleManager({
    log,
    serverIds: specs.keys(),
    // Every served tool says which server it is from: an upstream's own text cannot.
    tagAll: true,
    serverTimeoutMs: (serverId) => specs.get(serverId)?.timeoutMs,
    unavailable: () => notServing(upstreams),
    callUpstream: (target, args, callOptions) => {
      const upstream = upstreams.get(target.serverId);
      if (!upstream?.connected) throw new UpstreamUnavailableError(target.serverId);
      return upstream.callTool(target.originalName, args, callOptions);
    },
  });
}

/** One Upstream per spec, into `into`, registering its tools with the manager while it is up. */
function createUpstreams(
  specs: ReadonlyMap<string, UpstreamSpec>,
  manager: BundleManager,
  options: GatewayOptions,
  log: Logger,
  into: Map<string, Upstream>,
): void {
  for (const [serverId, spec] of specs) {
    into.set(
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
}

/** Starts every upstream; throws GatewayStartError (having closed them) when none came up. */
async function startUpstreams(upstreams: Upstreams, configPath: string): Promise<void> {
  await Promise.all([...upstreams.values()].map((u) => u.start()));
  // A failed attempt says why a turn later (its process's last stderr lines and exit).
  await new Promise((resolve) => setImmediate(resolve));
  if (upstreams.size > 0 && [...upstreams.values()].every((u) => !u.connected)) {
    const why = notServing(upstreams).map((d) => `"${d.serverId}" ${d.why}`);
    await Promise.all([...upstreams.values()].map((u) => u.close()));
    throw new GatewayStartError(
      `bundle: no server of ${configPath} could start, so there is nothing to serve: ${why.join('; ').replace(/\.$/, '')}.`,
    );
  }
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
  const manager = createManager(specs, upstreams, log);
  createUpstreams(specs, manager, options, log, upstreams);
  await startUpstreams(upstreams, options.configPath);
  log.info('bundle ready', {
    upstreams: [...upstreams.values()].map((u) => `${u.serverId}:${u.connected ? 'up' : 'retrying'}`),
    tools: manager.current.reconciled.tools.length,
    fingerprint: manager.fingerprint,
  });

  const instructionsNote = () => {
    const down = notServing(upstreams);
    return down.length > 0 ? ` Not serving now: ${down.map((d) => `${d.serverId} ${d.why}`).join('; ')}.` : '';
  };

  let stdio: StdioGateway | undefined;
  let http: HttpGateway | undefined;
  manager.onChange((state) => {
    log.info('bundle tool list changed', { fingerprint: state.fingerprint, tools: state.reconciled.tools.length });
    http?.toolsChanged();
    if (stdio) stdioToolsChanged(stdio.servers, log);
  });

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await Promise.all([...upstreams.values()].map((u) => u.close()));
      await stdio?.handle.close().catch(() => {});
      stdio?.releaseInput();
      await http?.close();
      log.info('bundle stopped');
      resolveClosed();
    })());

  try {
    if (options.http) {
      http = await serveHttp(options.http, () => createGatewayServer(manager, instructionsNote), log);
      log.info('bundle serving http', { url: http.url });
    } else {
      stdio = serveGatewayStdio({
        stdin: options.stdin ?? process.stdin,
        stdout: options.stdout ?? process.stdout,
        log,
        createServer: () => createGatewayServer(manager, instructionsNote),
        onEnd: () => void close(),
      });
    }
  } catch (err) {
    await close();
    throw err;
  }

  const gateway: Gateway = { manager, closed, close };
  if (http) gateway.http = { host: http.host, port: http.port, url: http.url };
  return gateway;
}
