import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { BundleManager } from './manager.js';

export const GATEWAY_INFO = { name: 'notify-mcp-bundle', version: '0.1.0' } as const;

/**
 * The MCP server one client connection talks to: the low-level SDK `Server` with our own
 * tools/list and tools/call (the gateway forwards arguments untouched; the upstream
 * validates them). Each call is one turn of the manager, so it resolves against the list it
 * started with.
 */
export function createGatewayServer(manager: BundleManager): Server {
  const server = new Server(GATEWAY_INFO, {
    capabilities: { tools: { listChanged: true } },
    instructions:
      'Tools of several MCP servers. Names offered by more than one server are prefixed ' +
      '<server>__ and their descriptions start with [<server>].',
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: manager.current.reconciled.tools }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    manager.call(request.params.name, request.params.arguments, { signal: extra.signal }),
  );
  return server;
}
