#!/usr/bin/env node
/**
 * Records what this build's server answers to an opening `server/discover` and `initialize`
 * into dist/early-answers.json, for the early reader (src/transports/stdio/early-reader.ts)
 * to give before the rest of the server has loaded. The answers come from the server itself,
 * as stdio serves it: the SDK's serveStdio and our createServer (tsc's dist/), over in-memory
 * streams. Of the configuration, only NOTIFY_TOOLS changes those answers (the entry then lets
 * the SDK answer: changesServerAnswers in src/config/environment.ts), and nothing of the store,
 * so the App here carries only what building a server reads (its configuration and channel names), and
 * no native module is loaded: the Docker build stage runs this without one. The server
 * checks every early answer against its own at run time and logs a difference
 * (stdio-wire.ts); test/e2e/stdio.test.ts fails on such a line. Every protocol version the
 * SDK offers is asked; those it echoes back are the ones it serves.
 */
import { writeFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { loadConfig } from '../dist/config/config.js';
import { silentLogger } from '../dist/core/log.js';
import { createServer } from '../dist/mcp/server.js';

const OUT = new URL('../dist/early-answers.json', import.meta.url);
const MODERN = '2026-07-28';
const CLIENT = { name: 'notify-mcp-build', version: '0' };
// `store` is only a key here: the banner hub is keyed by it and reads it on a request, never on these.
const config = loadConfig({ NOTIFY_DATA_DIR: '/nonexistent' });
// The channels the default configuration offers (a webhook channel only with targets), as the server's App has them.
const app = { config, channels: config.channels.map((c) => ({ name: c.name })), store: {}, log: silentLogger };

/** Writes each request, in order, to a fresh stdio connection and returns the answers by id. */
async function ask(requests) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const answers = new Map();
  let buf = '';
  stdout.setEncoding('utf8').on('data', (c) => {
    buf += c;
    for (let nl; (nl = buf.indexOf('\n')) >= 0; buf = buf.slice(nl + 1)) {
      const m = JSON.parse(buf.slice(0, nl));
      answers.set(m.id, m);
    }
  });
  const handle = serveStdio(({ era }) => createServer(app, {}, era), { transport: new StdioServerTransport(stdin, stdout) });
  for (const r of requests) stdin.write(JSON.stringify({ jsonrpc: '2.0', ...r }) + '\n');
  const deadline = Date.now() + 10_000;
  while (answers.size < requests.length) {
    if (Date.now() > deadline) throw new Error(`the server answered ${answers.size} of ${requests.length} requests while recording the early answers`);
    await new Promise((r) => setTimeout(r, 5));
  }
  await handle.close();
  return answers;
}

const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': CLIENT };
const discovered = await ask([{ id: 1, method: 'server/discover', params: { _meta: meta } }]);
const initialized = await ask(SUPPORTED_PROTOCOL_VERSIONS.map((v, i) => ({ id: i + 1, method: 'initialize', params: { protocolVersion: v, capabilities: {}, clientInfo: CLIENT } })));
const discover = discovered.get(1)?.result;
if (!discover?.supportedVersions?.includes(MODERN)) throw new Error(`server/discover did not answer with ${MODERN}: ${JSON.stringify(discovered.get(1))}`);
const initialize = {};
SUPPORTED_PROTOCOL_VERSIONS.forEach((v, i) => {
  const result = initialized.get(i + 1)?.result;
  if (result?.protocolVersion === v) initialize[v] = result;
});
if (Object.keys(initialize).length === 0) throw new Error('initialize answered no version');
writeFileSync(OUT, JSON.stringify({ discover: { versions: discover.supportedVersions, result: discover }, initialize }) + '\n');
