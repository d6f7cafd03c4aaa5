/**
 * Prometheus metrics for the HTTP server, on a registry of its own (not prom-client's
 * global one, so two servers in one process, as in tests, never share counters). Label
 * values come from closed sets (routes, known tool names, error codes), so a caller cannot
 * grow the series count.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { channelToolName, SEND_TOOL } from './channels/union.js';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'route' | 'method' | 'status'>;
  toolCalls: Counter<'tool' | 'outcome'>;
  sendSeconds: Histogram<'via' | 'outcome'>;
  activeSessions: Gauge;
  /** Watches one session's JSON-RPC traffic for tools/call requests and their answers. */
  observeSession(knownTools: ReadonlySet<string>): SessionObserver;
}

export interface SessionObserver {
  incoming(message: JSONRPCMessage): void;
  outgoing(message: JSONRPCMessage): void;
}

export interface MetricsOptions {
  defaultMetrics?: boolean;
  /** The server's channels: the values the `via` label may take (anything else is `invalid`). */
  channels?: readonly string[];
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const channels = options.channels ?? [];
  // Send tools and the channel each implies; the polymorphic tool's comes from its arguments.
  const SEND_TOOLS: Record<string, string | undefined> = {
    [SEND_TOOL]: undefined,
    ...Object.fromEntries(channels.map((via) => [channelToolName(via), via])),
  };
  const VIAS = new Set(channels);
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'notify_' });
  const httpRequests = new Counter({
    name: 'notify_http_requests_total',
    help: 'HTTP requests by route, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const toolCalls = new Counter({
    name: 'notify_tool_calls_total',
    help: 'MCP tool calls by tool and outcome (ok, an error code, or protocol_error).',
    labelNames: ['tool', 'outcome'] as const,
    registers: [registry],
  });
  const sendSeconds = new Histogram({
    name: 'notify_send_duration_seconds',
    help: 'Time from a send tool call to its answer, retries included, by channel and outcome.',
    labelNames: ['via', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30],
    registers: [registry],
  });
  const activeSessions = new Gauge({
    name: 'notify_mcp_sessions_active',
    help: 'Open MCP sessions on this process.',
    registers: [registry],
  });

  const observeSession = (knownTools: ReadonlySet<string>): SessionObserver => {
    const pending = new Map<string | number, { tool: string; via?: string; started: number }>();
    return {
      incoming(message) {
        if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) return;
        const params = (message.params ?? {}) as { name?: unknown; arguments?: { via?: unknown; notification?: { via?: unknown } } };
        const name = typeof params.name === 'string' && knownTools.has(params.name) ? params.name : 'unknown';
        let via: string | undefined;
        if (name in SEND_TOOLS) {
          const raw = SEND_TOOLS[name] ?? params.arguments?.via ?? params.arguments?.notification?.via;
          via = typeof raw === 'string' && VIAS.has(raw) ? raw : 'invalid';
        }
        pending.set(message.id, { tool: name, via, started: performance.now() });
      },
      outgoing(message) {
        if (!('id' in message) || message.id === null || message.id === undefined || 'method' in message) return;
        const call = pending.get(message.id);
        if (!call) return;
        pending.delete(message.id);
        const outcome = outcomeOf(message);
        toolCalls.inc({ tool: call.tool, outcome });
        if (call.via) sendSeconds.observe({ via: call.via, outcome }, (performance.now() - call.started) / 1000);
      },
    };
  };

  return { registry, httpRequests, toolCalls, sendSeconds, activeSessions, observeSession };
}

const CODE_RE = /^[A-Z_]{1,40}$/;

function outcomeOf(message: JSONRPCMessage): string {
  if ('error' in message) return 'protocol_error';
  if (!('result' in message)) return 'protocol_error';
  const result = message.result as { isError?: boolean; structuredContent?: { error?: { code?: unknown } } };
  if (!result.isError) return 'ok';
  const code = result.structuredContent?.error?.code;
  return typeof code === 'string' && CODE_RE.test(code) ? code : 'error';
}
