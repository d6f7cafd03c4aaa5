#!/usr/bin/env node
/**
 * The banner feed's baseline: a plain node:http server answering every GET with the same
 * JSON bytes notify-mcp's GET /banners answered, preloaded from a file.
 *
 *   node bench/plain-server.mjs PORT BODY_FILE
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [port, file] = process.argv.slice(2);
const body = readFileSync(file);
createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
}).listen(Number(port), '127.0.0.1');
process.once('SIGTERM', () => process.exit(0));
