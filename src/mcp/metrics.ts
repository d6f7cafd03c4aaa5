/**
 * Prometheus metrics for the HTTP server, on a registry of its own (not prom-client's
 * global one, so two servers in one process, as in tests, never share counters). Label
 * values come from closed sets (routes, known tool names, error codes), so a caller cannot
 * grow the series count.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { channelToolName, SEND_TOOL } from '../channels/send-union.js';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'route' | 'method' | 'status'>;
  toolCalls: Counter<'tool' | 'outcome'>;
  sendSeconds: Histogram<'via' | 'outcome'>;
  activeSessions: Gauge;
  /**
   * Starts watching one tools/call (any protocol era); the returned function is told how it
   * ended. Names outside `knownTools` count as `unknown`.
   */
  observeCall(knownTools: ReadonlySet<string>): CallObserver;
}

export type CallObserver = (tool: string, args: unknown) => (outcome: CallToolResult | 'protocol_error') => void;

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

  const observeCall =
    (knownTools: ReadonlySet<string>): CallObserver =>
    (tool, args) => {
      const name = knownTools.has(tool) ? tool : 'unknown';
      let via: string | undefined;
      if (name in SEND_TOOLS) {
        const a = (args ?? {}) as { via?: unknown; notification?: { via?: unknown } };
        const raw = SEND_TOOLS[name] ?? a.via ?? a.notification?.via;
        via = typeof raw === 'string' && VIAS.has(raw) ? raw : 'invalid';
      }
      const started = performance.now();
      return (answer) => {
        const outcome = outcomeOf(answer);
        toolCalls.inc({ tool: name, outcome });
        if (via) sendSeconds.observe({ via, outcome }, (performance.now() - started) / 1000);
      };
    };

  return { registry, httpRequests, toolCalls, sendSeconds, activeSessions, observeCall };
}

const CODE_RE = /^[A-Z_]{1,40}$/;

function outcomeOf(answer: CallToolResult | 'protocol_error'): string {
  if (answer === 'protocol_error') return 'protocol_error';
  if (!answer.isError) return 'ok';
  const code = (answer.structuredContent as { error?: { code?: unknown } } | undefined)?.error?.code;
  return typeof code === 'string' && CODE_RE.test(code) ? code : 'error';
}
