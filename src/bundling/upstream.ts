import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import {
  Client,
  ProtocolError,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type Tool,
  type Transport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Logger } from '../core/log.js';
import type { CallOptions, ToolArguments } from './dispatcher.js';
import { UpstreamUnavailableError } from './errors.js';
import { isStdioSpec, type UpstreamSpec } from './servers-config.js';
import { boundedFetch, MAX_UPSTREAM_MESSAGE_BYTES, type UpstreamMessageTooLargeError } from './upstream-http.js';
import { screenToolLists } from './tool-screen.js';
import { BoundedLineSplitter, MAX_STDERR_LINE, upstreamStderrLine } from './upstream-stderr.js';

export interface BackoffOptions {
  /** First retry delay; doubles per failed attempt. */
  initialMs: number;
  /** Cap of the delay. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 10_000 };

/** The least time between two tools/list refreshes of one upstream. */
export const REFRESH_MIN_INTERVAL_MS = 250;

export interface UpstreamHooks {
  /** Connected, or its tool list changed: the full current list. */
  onTools(serverId: string, tools: Tool[]): void;
  /** It was up and is not any more; its tools must go. */
  onDown(serverId: string): void;
}

export interface UpstreamOptions {
  log: Logger;
  hooks: UpstreamHooks;
  backoff?: BackoffOptions;
  /** How often an HTTP upstream is pinged (a stdio one is watched through its process). */
  healthIntervalMs?: number;
  /** Bound on connect + initialize + first tools/list. */
  connectTimeoutMs?: number;
  clientInfo?: { name: string; version: string };
  /** Where a stdio upstream's stderr goes, one JSON line at a time; default our stderr. */
  writeStderr?: (line: string) => void;
}

type State = 'idle' | 'connecting' | 'up' | 'down' | 'closed';

/** The last stderr lines of an upstream kept to say why it is down, each cut to STDERR_TAIL_CHARS. */
const STDERR_TAIL_LINES = 5;
const STDERR_TAIL_CHARS = 300;

interface AttemptFacts {
  stderr: string[];
  exit?: { code: number | null; signal: string | null };
}

/** Why an upstream is not serving: what ended its last attempt, how its process exited, what it last wrote on stderr. */
export interface UpstreamFailure {
  reason: string;
  exitCode?: number | null;
  signal?: string | null;
  stderr: string[];
  /** It has not served since the gateway started. */
  neverUp: boolean;
}

/** Backoff delay before retry number `attempt` (0-based). */
export function backoffDelay(attempt: number, backoff: BackoffOptions): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(attempt, 30));
}

/**
 * One upstream MCP server: connects, lists its tools, follows its `tools/list_changed`, and
 * when it dies (process exit, closed connection, failed health check) reports it down and
 * reconnects with exponential backoff until closed.
 *
 * Either protocol era: the v2 client probes with `server/discover` and falls back to the
 * 2025 `initialize` handshake (on stdio the probe runs in a throwaway sibling process, so a
 * server that exits on an unknown first request still gets a clean start). Under
 * 2026-07-28, list changes arrive on a `subscriptions/listen` stream the client opens, and
 * the health check is `server/discover` (there is no `ping`).
 */
export class Upstream {
  private state: State = 'idle';
  private client: Client | undefined;
  private generation = 0;
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  private readonly log: Logger;
  private readonly backoff: BackoffOptions;
  /** The refresh loop of one generation: at most one tools/list in flight, one more pending. */
  private refreshing: { gen: number; again: boolean } | undefined;
  /** Of the current attempt: its process's last stderr lines and its exit (they may come after its close). */
  private facts: AttemptFacts = { stderr: [] };
  private everUp = false;
  private lastFailure: UpstreamFailure | undefined;

  constructor(
    readonly serverId: string,
    private readonly spec: UpstreamSpec,
    private readonly options: UpstreamOptions,
  ) {
    // `upstream` as on the lines of its own stderr, so one filter finds both.
    this.log = options.log.child({ server: serverId, upstream: serverId });
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
  }

  get connected(): boolean {
    return this.state === 'up';
  }

  /** Why it is not serving now, or undefined while it is (or before its first attempt ended). */
  get failure(): UpstreamFailure | undefined {
    return this.state === 'up' ? undefined : this.lastFailure;
  }

  /** The first attempt; a failure schedules retries and still resolves. */
  start(): Promise<void> {
    return this.connect();
  }

  async callTool(name: string, args: ToolArguments, options: CallOptions = {}): Promise<CallToolResult> {
    const client = this.client;
    if (this.state !== 'up' || !client) throw new UpstreamUnavailableError(this.serverId);
    const params = args === undefined ? { name } : { name, arguments: args };
    // The dispatcher's bound (per server: `timeoutMs` in the servers file) replaces the SDK's
    // own 60 s request timeout, which would otherwise cut a longer bound short.
    const requestOptions = { signal: options.signal, timeout: options.timeoutMs };
    try {
      return await client.callTool(params, requestOptions);
    } catch (err) {
      // An HTTP upstream has no process to watch: a failed call is the first sign of death,
      // so check now rather than at the next health check.
      if (!isStdioSpec(this.spec) && !(err instanceof ProtocolError)) this.checkHealth(client);
      throw err;
    }
  }

  private checkHealth(client: Client): void {
    const gen = this.generation;
    const options = { timeout: this.options.healthIntervalMs ?? 15_000 };
    const alive = client.getProtocolEra() === 'modern' ? client.discover(options) : client.ping(options);
    alive.catch((err: unknown) => {
      if (gen === this.generation && this.client === client) {
        this.log.warn('upstream ping failed', { error: errorText(err) });
        this.lost('ping failed');
      }
    });
  }

  async close(): Promise<void> {
    this.state = 'closed';
    this.generation++;
    clearTimeout(this.retryTimer);
    clearInterval(this.healthTimer);
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => {});
  }

  private async connect(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'connecting';
    const gen = ++this.generation;
    const facts: AttemptFacts = { stderr: [] };
    this.facts = facts;
    const client = new Client(this.options.clientInfo ?? { name: 'notify-mcp-bundle', version: '0.1.0' }, {
      versionNegotiation: { mode: 'auto' },
      // Both eras: an unsolicited notification (2025) or the listen stream the client opens (2026).
      listChanged: {
        tools: {
          autoRefresh: false,
          debounceMs: 0,
          onChanged: () => {
            if (gen === this.generation) this.requestRefresh(client, gen);
          },
        },
      },
    });
    this.client = client;
    const transport = this.createTransport(facts, (error) => {
      if (gen !== this.generation) return;
      this.log.warn('upstream message refused', { error: error.message });
      this.lost('message over the bound');
    });
    screenToolLists(transport, {
      onRefused: (tool, reason) => this.log.warn('upstream tool refused', { tool, reason }),
      onCut: (kept, reason) => this.log.warn('upstream tool list cut', { kept, reason }),
    });
    client.onclose = () => {
      if (gen === this.generation) this.lost('connection closed');
    };
    try {
      const timeout = this.options.connectTimeoutMs ?? 30_000;
      await client.connect(transport, { timeout });
      const tools = await listAllTools(client, timeout);
      if (gen !== this.generation) return; // closed meanwhile
      this.state = 'up';
      this.attempt = 0;
      this.everUp = true;
      this.lastFailure = undefined;
      const pid = transport instanceof StdioClientTransport ? transport.pid : undefined;
      this.log.info('upstream connected', { pid, era: client.getProtocolEra(), tools: tools.length });
      this.options.hooks.onTools(this.serverId, tools);
      if (!isStdioSpec(this.spec)) this.watchHealth(client, gen);
      // A change announced while connecting may postdate the list just served.
      if (this.refreshing?.gen === gen) this.startRefreshLoop(client, gen);
    } catch (err) {
      if (gen !== this.generation) return;
      this.log.warn('upstream connect failed', { error: errorText(err) });
      // The error is the reason a person (and a client's model) reads for an upstream without stderr.
      this.lost(`connect failed: ${errorText(err).slice(0, STDERR_TAIL_CHARS)}`);
    }
  }

  private createTransport(facts: AttemptFacts, onTooLarge: (error: UpstreamMessageTooLargeError) => void): Transport {
    if (isStdioSpec(this.spec)) {
      const transport = new StdioClientTransport({
        command: this.spec.command,
        args: this.spec.args,
        env: this.spec.env,
        ...(this.spec.cwd !== undefined ? { cwd: this.spec.cwd } : {}),
        // Piped, never inherited: its lines become our JSON log lines on stderr, and
        // nothing of it can reach our stdout (the JSON-RPC channel).
        stderr: 'pipe',
        maxBufferSize: MAX_UPSTREAM_MESSAGE_BYTES,
      });
      const stderr = transport.stderr as Readable | null;
      if (stderr) {
        const write = this.options.writeStderr ?? ((line: string) => void process.stderr.write(line));
        // Cut while reading: a line that never ends must not be held whole.
        const lines = new BoundedLineSplitter(MAX_STDERR_LINE, (line, truncated) => {
          write(upstreamStderrLine(line, this.serverId, new Date(), truncated));
          if (line.trim() !== '') {
            facts.stderr.push(line.slice(0, STDERR_TAIL_CHARS));
            if (facts.stderr.length > STDERR_TAIL_LINES) facts.stderr.shift();
          }
        });
        stderr.on('data', (chunk: Buffer) => lines.push(chunk));
        stderr.once('end', () => lines.end());
      }
      const start = transport.start.bind(transport);
      transport.start = async () => {
        await start();
        // The SDK keeps its child process private; how it exited is what says why an upstream could not start.
        const child = (transport as unknown as { _process?: ChildProcess })._process;
        child?.once('exit', (code, signal) => (facts.exit = { code, signal }));
      };
      return transport;
    }
    return new StreamableHTTPClientTransport(new URL(this.spec.url), {
      requestInit: { headers: this.spec.headers },
      fetch: boundedFetch({ maxBytes: MAX_UPSTREAM_MESSAGE_BYTES, onTooLarge }),
    });
  }

  /**
   * A list change: one tools/list now, or, while one is in flight (or the upstream is still
   * connecting), one more after it, however many changes arrive meanwhile. Refreshes of one
   * upstream start at least `REFRESH_MIN_INTERVAL_MS` apart, so a flood costs a few lists.
   */
  private requestRefresh(client: Client, gen: number): void {
    if (this.refreshing?.gen === gen) {
      this.refreshing.again = true;
      return;
    }
    this.refreshing = { gen, again: true };
    if (this.state === 'up') this.startRefreshLoop(client, gen);
  }

  private startRefreshLoop(client: Client, gen: number): void {
    const loop = this.refreshing;
    if (!loop || loop.gen !== gen) return;
    void (async () => {
      let last = 0;
      while (loop.again && gen === this.generation && this.state === 'up') {
        loop.again = false;
        const wait = last + REFRESH_MIN_INTERVAL_MS - Date.now();
        if (last > 0 && wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (gen !== this.generation || this.state !== 'up') break;
        last = Date.now();
        await this.refresh(client, gen);
      }
      if (this.refreshing === loop) this.refreshing = undefined;
    })();
  }

  private async refresh(client: Client, gen: number): Promise<void> {
    try {
      const tools = await listAllTools(client, this.options.connectTimeoutMs ?? 30_000);
      if (gen !== this.generation || this.state !== 'up') return;
      this.log.info('upstream tool list changed', { tools: tools.length });
      this.options.hooks.onTools(this.serverId, tools);
    } catch (err) {
      if (gen === this.generation) this.log.warn('upstream tools/list failed', { error: errorText(err) });
    }
  }

  private watchHealth(client: Client, gen: number): void {
    const every = this.options.healthIntervalMs ?? 15_000;
    this.healthTimer = setInterval(() => {
      if (gen === this.generation) this.checkHealth(client);
    }, every);
  }

  /** Down from any state: drop the client, tell the hooks if it was up, schedule a retry. */
  private lost(reason: string): void {
    if (this.state === 'closed' || this.state === 'down') return;
    const wasUp = this.state === 'up';
    this.state = 'down';
    this.generation++;
    clearInterval(this.healthTimer);
    const client = this.client;
    this.client = undefined;
    void client?.close().catch(() => {});
    const first = this.attempt === 0;
    const delay = backoffDelay(this.attempt++, this.backoff);
    if (wasUp) this.options.hooks.onDown(this.serverId);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    // A turn later: a process's last stderr lines and its exit come after the close that brought us here.
    const facts = this.facts;
    setImmediate(() => {
      const failure: UpstreamFailure = { reason, stderr: [...facts.stderr], neverUp: !this.everUp };
      if (facts.exit) Object.assign(failure, { exitCode: facts.exit.code, signal: facts.exit.signal });
      if (this.state !== 'closed') this.lastFailure = failure;
      const fields = {
        reason,
        retry_in_ms: delay,
        ...exitFields(failure),
        ...(failure.stderr.length > 0 ? { stderr: failure.stderr } : {}),
      };
      // Said loudly once: an upstream that never starts must not look like a slow one.
      if (first && !this.everUp) this.log.error('upstream could not start', fields);
      else this.log.warn('upstream down', fields);
    });
  }
}

async function listAllTools(client: Client, timeout: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    // Always from the upstream: this runs on connect and after a list change.
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout, cacheMode: 'bypass' });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

function exitFields(f: UpstreamFailure): Record<string, unknown> {
  return {
    ...(f.exitCode !== undefined && f.exitCode !== null ? { exit_code: f.exitCode } : {}),
    ...(f.signal ? { signal: f.signal } : {}),
  };
}

/** One line on why an upstream is not serving, for a person or a model: its reason, exit and last stderr line. */
export function failureText(f: UpstreamFailure): string {
  const exit = f.exitCode !== undefined && f.exitCode !== null ? `, exit code ${f.exitCode}` : f.signal ? `, killed by ${f.signal}` : '';
  const said = f.stderr.length > 0 ? `; its stderr ended: ${f.stderr.slice(-2).join(' / ')}` : '';
  return `${f.neverUp ? 'could not start' : 'went down'} (${f.reason}${exit})${said}`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
