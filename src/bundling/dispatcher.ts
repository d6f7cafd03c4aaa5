import type { CallToolResult } from '@modelcontextprotocol/server';
import { UpstreamUnavailableError } from './errors.js';
import type { Reconciled, ToolTarget } from './types.js';

export type ToolArguments = Record<string, unknown> | undefined;

export interface CallOptions {
  signal?: AbortSignal;
}

/**
 * Sends one call to an upstream under the tool's original name. Throw
 * `UpstreamUnavailableError` when the server is not connected; any other throw is reported
 * as an upstream failure.
 */
export type CallUpstream = (
  target: ToolTarget,
  args: ToolArguments,
  options: CallOptions,
) => Promise<CallToolResult>;

export interface Dispatcher {
  /** Never rejects: every failure becomes an `isError: true` result. */
  call(name: string, args?: ToolArguments, options?: CallOptions): Promise<CallToolResult>;
}

export function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

function availableNames(reconciled: Reconciled): string {
  const names = reconciled.tools.map((t) => t.name);
  return names.length > 0 ? names.join(', ') : '(none)';
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Routes reconciled names to their upstream against one fixed list (the one given here), so
 * a call resolves against the list it started with.
 */
export function createDispatcher(reconciled: Reconciled, callUpstream: CallUpstream): Dispatcher {
  return {
    async call(name, args, options = {}) {
      const target = reconciled.forward.get(name);
      if (!target) {
        return errorResult(`Unknown tool "${name}". Available tools: ${availableNames(reconciled)}.`);
      }
      try {
        return await callUpstream(target, args, options);
      } catch (err) {
        if (err instanceof UpstreamUnavailableError) {
          return errorResult(
            `Tool "${name}" is unavailable: server "${target.serverId}" is not connected. ` +
              `Try again later or use another tool. Available tools: ${availableNames(reconciled)}.`,
          );
        }
        return errorResult(`Tool "${name}" failed on server "${target.serverId}": ${message(err)}`);
      }
    },
  };
}
