/**
 * docs/bundling.md's example servers file is the one in docs/examples/servers.json, it parses,
 * and the gateway serves it: each `npx -y <package>` is replaced by that package's installed
 * copy (no network here), and each server's files go to a temporary directory; the ids, the
 * env and the shape are the file's own.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { parseServersConfig, runGateway } from '../../src/bundling/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const exampleText = readFileSync(join(root, 'docs/examples/servers.json'), 'utf8');
const require = createRequire(join(root, 'test/package.json'));
const memoryManifest = require.resolve('@modelcontextprotocol/server-memory/package.json');
const memoryBin = join(dirname(memoryManifest), Object.values((require(memoryManifest) as { bin: Record<string, string> }).bin)[0]!);
/** The installed copy of each package the example starts with npx. */
const INSTALLED: Record<string, string> = { 'notify-mcp': join(root, 'dist/cli.js'), '@modelcontextprotocol/server-memory': memoryBin };

const dir = mkdtempSync(join(tmpdir(), 'bundle-example-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Server = { command: string; args: string[]; env?: Record<string, string> };

describe('the example servers file (docs/examples/servers.json)', () => {
  it('is the one docs/bundling.md shows, and parses as an mcpServers file', () => {
    expect(readFileSync(join(root, 'docs/bundling.md'), 'utf8')).toContain('```json\n' + exampleText + '```');
    expect([...parseServersConfig(exampleText, 'docs/examples/servers.json').keys()].sort()).toEqual(['memory', 'notify']);
  });

  it('is served by the gateway: notify-mcp and the memory server as one server', async () => {
    const { mcpServers } = JSON.parse(exampleText) as { mcpServers: Record<string, Server> };
    const local = Object.fromEntries(
      Object.entries(mcpServers).map(([id, s]) => {
        expect(s.command).toBe('npx');
        const pkg = s.args.at(-1)!;
        expect(INSTALLED[pkg], pkg).toBeDefined();
        const env = {
          ...s.env,
          NOTIFY_DATA_DIR: join(dir, id),
          ...(s.env?.MEMORY_FILE_PATH ? { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } : {}),
        };
        return [id, { command: process.execPath, args: [INSTALLED[pkg]!], env }];
      }),
    );
    const configPath = join(dir, 'servers.json');
    writeFileSync(configPath, JSON.stringify({ mcpServers: local }));

    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const answers: Record<string, any>[] = [];
    let buf = '';
    stdout.on('data', (c: Buffer) => {
      buf += c.toString();
      for (let nl; (nl = buf.indexOf('\n')) >= 0; buf = buf.slice(nl + 1)) answers.push(JSON.parse(buf.slice(0, nl)));
    });
    const answer = async (id: number) => {
      for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
        const a = answers.find((x) => x.id === id);
        if (a) return a;
      }
      throw new Error(`no answer ${id}`);
    };
    const gateway = await runGateway({ configPath, log: silentLogger, stdin, stdout, writeUpstreamStderr: () => {} });
    const send = (m: object) => stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    await answer(1);
    send({ method: 'notifications/initialized' });
    // Both upstreams connect in the background: ask until both servers' tools are listed.
    let names: string[] = [];
    for (let id = 2; id < 200 && !(names.includes('send_notification') && names.includes('read_graph')); id++) {
      send({ id, method: 'tools/list' });
      names = ((await answer(id)).result.tools as { name: string }[]).map((t) => t.name);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(names).toEqual(expect.arrayContaining(['send_notification', 'show_banner', 'read_graph', 'create_entities']));
    stdin.end();
    await gateway.closed;
  }, 60_000);
});
