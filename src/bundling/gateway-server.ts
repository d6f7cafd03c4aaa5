import { Server, type CallToolResult, type ListToolsResult } from '@modelcontextprotocol/server';
import { callArguments } from '../mcp/call-arguments.js';
import type { BundleManager } from './manager.js';
import type { ToolArguments } from './dispatcher.js';

export const GATEWAY_INFO = { name: 'notify-mcp-bundle', version: '0.1.0' } as const;

/**
 * The MCP server one client connection (2025-era) or one request (2026-07-28) talks to: the
 * v2 SDK's low-level `Server` with our own tools/list and tools/call (the gateway forwards
 * arguments untouched; the upstream validates them). Each call is one turn of the manager,
 * so it resolves against the list it started with.
 */
export function createGatewayServer(manager: BundleManager, notServing: () => string = () => ''): Server {
  const server = new Server(GATEWAY_INFO, {
    capabilities: { tools: { listChanged: true } },
    // Built per connection: a client learns at once of a server whose tools are missing, and why.
    instructions:
      'Tools of several MCP servers. Each description starts with [<server>], the server the ' +
      'tool comes from; names offered by more than one server are prefixed <server>__.' +
      notServing(),
    // The list is the same for every caller but follows the upstreams: a client re-lists
    // rather than trusting a cached copy (list_changed says when).
    cacheHints: { 'tools/list': { ttlMs: 0, cacheScope: 'public' }, 'server/discover': { ttlMs: 0, cacheScope: 'public' } },
  });
  server.setRequestHandler('tools/list', (): ListToolsResult => ({ tools: manager.current.reconciled.tools }));
  server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult> => {
    const args = callArguments(request.params) ?? undefined;
    if (args !== undefined && (typeof args !== 'object' || Array.isArray(args))) {
      return { content: [{ type: 'text', text: 'Arguments must be a JSON object (name → value); nothing was forwarded.' }], isError: true };
    }
    return manager.call(request.params.name, args as ToolArguments, { signal: ctx.mcpReq.signal });
  });
  return server;
}
