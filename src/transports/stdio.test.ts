/**
 * The stdio transport over injected streams (no subprocess): it answers JSON-RPC line by
 * line, in either protocol era, and at end of input it still answers the calls in flight
 * before closing (the SDK's own transport would drop them).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { loadConfig } from '../config.js';
import { silentLogger } from '../log.js';
import { serveStdio } from './stdio.js';

const rpc = (id: number | undefined, method: string, params: unknown = {}) =>
  JSON.stringify({ jsonrpc: '2.0', ...(id === undefined ? {} : { id }), method, params }) + '\n';

const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

describe.each(['2025-11-25', '2026-07-28'])('serveStdio, a %s client', (version) => {
  it('answers every call sent before end of input, then closes', async () => {
    const app = await createApp(loadConfig({ NOTIFY_DATA_DIR: mkdtempSync(join(tmpdir(), 'stdio-')) }), silentLogger);
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let output = '';
    stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    const { closed } = await serveStdio(app, { stdin, stdout });

    const modern = version === '2026-07-28';
    const withMeta = (params: Record<string, unknown>) => (modern ? { ...params, _meta: envelope } : params);
    if (modern) {
      stdin.write(rpc(1, 'server/discover', withMeta({})));
    } else {
      stdin.write(rpc(1, 'initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } }));
      stdin.write(rpc(undefined, 'notifications/initialized'));
    }
    stdin.write(rpc(2, 'tools/list', withMeta({})));
    const email = { via: 'email', to: 'ops@example.com', subject: 'Hi', body_html: '<p>hi</p>' };
    stdin.end(rpc(3, 'tools/call', withMeta({ name: 'send_notification', arguments: email })));
    await closed;
    await app.close();

    const messages = output.trim().split('\n').map((l) => JSON.parse(l));
    expect(messages.map((m) => m.id)).toEqual([1, 2, 3]);
    expect(messages[1].result.tools[0].name).toBe('send_notification');
    expect(messages[2].result.structuredContent).toMatchObject({ via: 'email', status: 'dry_run' });
  });
});
