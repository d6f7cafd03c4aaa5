import type { CallToolResult } from '@modelcontextprotocol/server';
import { UpstreamUnavailableError } from './errors.js';
import type { Reconciled, ToolTarget } from './types.js';

export type ToolArguments = Record<string, unknown> | undefined;

/**
 * The bound of a call that sets none: 60 s, the MCP SDK's own request default, so a call
 * through the dispatcher is bounded as a direct SDK call would be.
 */
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** The largest delay `setTimeout` honours (about 24.8 days); a longer bound is cut to it. */
const MAX_TIMEOUT_MS = 2_147_483_647;

export interface CallOptions {
  /** The caller's cancellation: the call ends at once with an error result. */
  signal?: AbortSignal;
  /**
   * Bound of this call in milliseconds (a positive number). At the bound the call ends as an
   * error result and the signal given to the upstream aborts. Default: the server's bound
   * (`DispatcherOptions.serverTimeoutMs`), else `DispatcherOptions.defaultTimeoutMs`.
   */
  timeoutMs?: number;
}

/** What `CallUpstream` receives: the signal aborts at the caller's cancel or at the bound. */
export interface UpstreamCallOptions {
  signal: AbortSignal;
  /** The bound in force, for an upstream client that takes its own request timeout. */
  timeoutMs: number;
}

/**
 * Sends one call to an upstream under the tool's original name. Throw
 * `UpstreamUnavailableError` when the server is not connected; any other throw is reported
 * as an upstream failure. Should stop work when `options.signal` aborts; one that does not
 * is no longer waited for.
 */
export type CallUpstream = (target: ToolTarget, args: ToolArguments, options: UpstreamCallOptions) => Promise<CallToolResult>;

export interface DispatcherOptions {
  /** Bound of a call that names none; default `DEFAULT_CALL_TIMEOUT_MS` (60 s). */
  defaultTimeoutMs?: number;
  /** A server's own bound, over the default (the gateway: `timeoutMs` in the servers file). */
  serverTimeoutMs?: (serverId: string) => number | undefined;
  /**
   * Servers not serving now, each with why (the gateway: one that could not start): named
   * when a call misses, since a server that never started has no tool to call by name.
   */
  unavailable?: () => readonly { serverId: string; why: string }[];
}

export interface Dispatcher {
  /** Never rejects: every failure, the timeout and a cancel become an `isError: true` result. */
  call(name: string, args?: ToolArguments, options?: CallOptions): Promise<CallToolResult>;
}

export function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

function availableNames(reconciled: Reconciled): string {
  const names = reconciled.tools.map((t) => t.name);
  return names.length > 0 ? names.join(', ') : '(none)';
}

/** ` Not serving now: a (why); b (why).`, or nothing. */
function unavailableNote(options: DispatcherOptions): string {
  const down = options.unavailable?.() ?? [];
  return down.length > 0 ? ` Not serving now: ${down.map((d) => `server "${d.serverId}" ${d.why}`).join('; ')}.` : '';
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isTimeout(ms: unknown): ms is number {
  return typeof ms === 'number' && ms > 0 && !Number.isNaN(ms);
}

/** Why the call's own signal aborted: told apart from an upstream error by identity. */
class CallTimeout extends Error {
  override readonly name = 'TimeoutError';
  constructor(readonly ms: number) {
    super(`timed out after ${ms} ms`);
  }
}

/**
 * Routes reconciled names to their upstream against one fixed list (the one given here), so
 * a call resolves against the list it started with. Every call is bounded, so a hung
 * upstream cannot hold a turn (and the manager's pending list) open.
 */
export function createDispatcher(reconciled: Reconciled, callUpstream: CallUpstream, options: DispatcherOptions = {}): Dispatcher {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  if (!isTimeout(defaultTimeoutMs)) {
    throw new RangeError(`defaultTimeoutMs must be a positive number of milliseconds, got ${defaultTimeoutMs}`);
  }
  return {
    async call(name, args, callOptions = {}) {
      const target = reconciled.forward.get(name);
      if (!target) {
        return errorResult(`Unknown tool "${name}". Available tools: ${availableNames(reconciled)}.${unavailableNote(options)}`);
      }
      const timeoutMs = callOptions.timeoutMs ?? options.serverTimeoutMs?.(target.serverId) ?? defaultTimeoutMs;
      if (!isTimeout(timeoutMs)) {
        return errorResult(`Tool "${name}" was not called: timeoutMs must be a positive number, got ${String(timeoutMs)}.`);
      }
      const caller = callOptions.signal;
      if (caller?.aborted) return errorResult(`Tool "${name}" was cancelled before it was sent.`);

      const controller = new AbortController();
      const onCancel = () => controller.abort(caller?.reason);
      caller?.addEventListener('abort', onCancel, { once: true });
      const timer = setTimeout(() => controller.abort(new CallTimeout(timeoutMs)), Math.min(timeoutMs, MAX_TIMEOUT_MS));
      // Settles (by rejecting) when the call must end, whether or not the upstream listens.
      const ended = new Promise<never>((_, reject) => {
        controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
      });
      ended.catch(() => {});
      try {
        const upstream = Promise.resolve().then(() => callUpstream(target, args, { signal: controller.signal, timeoutMs }));
        return await Promise.race([upstream, ended]);
      } catch (err) {
        // Checked first: an upstream that rejects because its signal aborted has the same cause.
        if (controller.signal.reason instanceof CallTimeout) {
          return errorResult(
            `Tool "${name}" timed out after ${timeoutMs} ms on server "${target.serverId}"; ` +
              'it may still complete there. Try again later, or with a longer timeout.',
          );
        }
        if (controller.signal.aborted) return errorResult(`Tool "${name}" was cancelled.`);
        if (err instanceof UpstreamUnavailableError) {
          return errorResult(
            `Tool "${name}" is unavailable: server "${target.serverId}" is not connected. ` +
              `Try again later or use another tool. Available tools: ${availableNames(reconciled)}.${unavailableNote(options)}`,
          );
        }
        return errorResult(`Tool "${name}" failed on server "${target.serverId}": ${message(err)}`);
      } finally {
        clearTimeout(timer);
        caller?.removeEventListener('abort', onCancel);
      }
    },
  };
}
