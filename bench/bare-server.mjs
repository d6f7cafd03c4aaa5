#!/usr/bin/env node
/**
 * The baseline that performance goals are ratios against: a bare low-level v2 SDK server (the SDK
 * notify-mcp runs on) with one tool that declares an outputSchema and answers at once with a
 * structured result, so the SDK client validates it on every call, as it does notify-mcp's.
 * No validation of arguments, no store, no logs. It serves both protocol eras the way the
 * SDK documents: serveStdio on stdio; on HTTP, createMcpHandler for 2026-07-28 and
 * sessions (one transport each) for 2025-11-25, split by isLegacyRequest.
 *
 *   node bench/bare-server.mjs                 stdio
 *   node bench/bare-server.mjs --http PORT     Streamable HTTP on 127.0.0.1:PORT/mcp
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createMcpHandler, isLegacyRequest, Server, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

/** Also the floor server's tool (bench/floor-server.mjs), so the two differ by the insert alone. */
export const TOOL = {
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
  server.setRequestHandler('tools/list', async () => ({ tools: [TOOL] }));
  server.setRequestHandler('tools/call', async (request) => {
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

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

async function send(res, response) {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return void res.end();
  res.flushHeaders();
  await pipeline(Readable.fromWeb(response.body), res).catch(() => {});
}

async function serveHttp(port) {
  const modern = createMcpHandler(() => createBareServer(), { legacy: 'reject' });
  /** 2025-11-25: one transport per session, as a stateful server keeps clientInfo per connection. */
  const sessions = new Map();
  const http = createHttpServer(async (req, res) => {
    if (!req.url?.startsWith('/mcp')) return void res.writeHead(404).end();
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && k !== 'content-length') headers.set(k, String(v));
    const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers });
    if (req.method === 'POST' && !(await isLegacyRequest(request, body))) return send(res, await modern.fetch(request, { parsedBody: body }));
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (!transport) {
      if (typeof sid === 'string') return void res.writeHead(404).end();
      transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
        onsessionclosed: (id) => sessions.delete(id),
      });
      await createBareServer().connect(transport);
    }
    await send(res, await transport.handleRequest(request, { parsedBody: body }));
  });
  http.listen(port, '127.0.0.1', () => process.stderr.write(`bare listening on ${port}\n`));
  process.once('SIGTERM', () => process.exit(0));
}

const args = process.argv.slice(2);
if (import.meta.url !== `file://${process.argv[1]}`) {
  // imported for TOOL: serve nothing
} else if (args[0] === '--http') {
  await serveHttp(Number(args[1] ?? 0));
} else {
  serveStdio(() => createBareServer());
}
