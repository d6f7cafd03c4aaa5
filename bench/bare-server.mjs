#!/usr/bin/env node
/**
 * The baseline that performance goals are ratios against: a bare low-level SDK server (same SDK as
 * notify-mcp) with one tool that declares an outputSchema and answers at once with a
 * structured result, so the SDK client validates it on every call, as it does
 * notify-mcp's. No validation of arguments, no store, no logs.
 *
 *   node bench/bare-server.mjs                 stdio
 *   node bench/bare-server.mjs --http PORT     Streamable HTTP on 127.0.0.1:PORT/mcp (stateful sessions)
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const TOOL = {
  name: 'send',
  description: 'Sends a message.',
  inputSchema: {
    type: 'object',
    properties: { via: { type: 'string' }, to: { type: 'string' }, subject: { type: 'string' }, body_html: { type: 'string' } },
    additionalProperties: true,
  },
  outputSchema: {
    type: 'object',
    properties: {
      id: { type: 'string' },
      via: { type: 'string' },
      status: { type: 'string', enum: ['sent', 'dry_run'] },
      provider: { type: 'string' },
      accepted_at: { type: 'string', format: 'date-time' },
    },
    required: ['id', 'via', 'status', 'provider', 'accepted_at'],
  },
};

function createBareServer() {
  const server = new Server({ name: 'bare', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [TOOL] }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const result = {
      id: `ntf_${randomUUID().replaceAll('-', '')}`,
      via: String(request.params.arguments?.via ?? 'email'),
      status: 'dry_run',
      provider: 'dry-run',
      accepted_at: new Date().toISOString(),
    };
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
  });
  return server;
}

async function serveHttp(port) {
  /** One transport per session, as a stateful server keeps clientInfo per connection. */
  const sessions = new Map();
  const http = createHttpServer(async (req, res) => {
    if (!req.url?.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (!transport) {
      if (typeof sid === 'string') {
        res.writeHead(404).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await createBareServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  http.listen(port, '127.0.0.1', () => process.stderr.write(`bare listening on ${port}\n`));
  process.once('SIGTERM', () => process.exit(0));
}

const args = process.argv.slice(2);
if (args[0] === '--http') {
  await serveHttp(Number(args[1] ?? 0));
} else {
  await createBareServer().connect(new StdioServerTransport());
}
