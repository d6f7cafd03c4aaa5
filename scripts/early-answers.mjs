#!/usr/bin/env node
/**
 * Records what the built server answers to an opening `server/discover` and `initialize`
 * into dist/early-answers.json, for the early reader (src/transports/stdio/early-reader.ts)
 * to give before the rest of the server has loaded. Asked of dist/cli.js itself, with no
 * configuration (the answers do not depend on it), and with the previous file removed, so
 * the answers are this build's. Every version the SDK offers is asked; those it echoes back
 * are the ones it serves.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';

const OUT = new URL('../dist/early-answers.json', import.meta.url);
const CLI = new URL('../dist/cli.js', import.meta.url);
const MODERN = '2026-07-28';
const CLIENT = { name: 'notify-mcp-build', version: '0' };

rmSync(OUT, { force: true });

/** Writes each request on a fresh server, in order, and returns the answers by id. */
async function ask(requests) {
  const dataDir = mkdtempSync(join(tmpdir(), 'notify-early-'));
  try {
    const child = spawn(process.execPath, [CLI.pathname], {
      env: { PATH: process.env.PATH ?? '', HOME: dataDir, NOTIFY_DATA_DIR: dataDir, NOTIFY_LOG_LEVEL: 'error' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    for (const r of requests) child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...r }) + '\n');
    child.stdin.end();
    const code = await new Promise((resolve) => child.on('close', resolve));
    if (code !== 0) throw new Error(`dist/cli.js exited ${code} while recording the early answers`);
    return new Map(out.trim().split('\n').map((l) => JSON.parse(l)).map((m) => [m.id, m]));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': CLIENT };
const [discovered, initialized] = await Promise.all([
  ask([{ id: 1, method: 'server/discover', params: { _meta: meta } }]),
  ask(SUPPORTED_PROTOCOL_VERSIONS.map((v, i) => ({ id: i + 1, method: 'initialize', params: { protocolVersion: v, capabilities: {}, clientInfo: CLIENT } }))),
]);
const discover = discovered.get(1)?.result;
if (!discover?.supportedVersions?.includes(MODERN)) throw new Error(`server/discover did not answer with ${MODERN}: ${JSON.stringify(discovered.get(1))}`);
const initialize = {};
SUPPORTED_PROTOCOL_VERSIONS.forEach((v, i) => {
  const result = initialized.get(i + 1)?.result;
  if (result?.protocolVersion === v) initialize[v] = result;
});
if (Object.keys(initialize).length === 0) throw new Error('initialize answered no version');
writeFileSync(OUT, JSON.stringify({ discover: { versions: discover.supportedVersions, result: discover }, initialize }) + '\n');
