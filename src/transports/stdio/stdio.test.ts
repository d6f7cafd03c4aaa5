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
import { createApp } from '../../app.js';
import { loadConfig } from '../../config/config.js';
import { silentLogger } from '../../core/log.js';
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

    const messages = output
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(messages.map((m) => m.id)).toEqual([1, 2, 3]);
    expect(messages[1].result.tools[0].name).toBe('send_notification');
    expect(messages[2].result.structuredContent).toMatchObject({ via: 'email', status: 'dry_run' });
  });
});

/** A stdio connection over injected streams, opened in the given era, answers matched by id. */
async function connection(version: string) {
  const app = await createApp(loadConfig({ NOTIFY_DATA_DIR: mkdtempSync(join(tmpdir(), 'stdio-')) }), silentLogger);
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const messages: Record<string, any>[] = [];
  let buf = '';
  stdout.setEncoding('utf8').on('data', (c: string) => {
    buf += c;
    for (let nl; (nl = buf.indexOf('\n')) >= 0; buf = buf.slice(nl + 1)) messages.push(JSON.parse(buf.slice(0, nl)));
  });
  const { closed } = await serveStdio(app, { stdin, stdout });
  const modern = version === '2026-07-28';
  const withMeta = (params: Record<string, unknown>) => (modern ? { ...params, _meta: envelope } : params);
  if (!modern) {
    stdin.write(rpc(0, 'initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } }));
    stdin.write(rpc(undefined, 'notifications/initialized'));
  }
  const answer = async (id: number | null, count = 1): Promise<Record<string, any>> => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const found = messages.filter((m) => m.id === id);
      if (found.length >= count) return found[count - 1]!;
      if (Date.now() > deadline) throw new Error(`no answer with id ${id}; got ${JSON.stringify(messages).slice(0, 500)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return {
    stdin,
    answer,
    withMeta,
    async end() {
      stdin.end();
      await closed;
      await app.close();
    },
  };
}

describe.each(['2025-11-25', '2026-07-28'])('serveStdio screens what the SDK would drop or dump, a %s client', (version) => {
  it("answers a tools/call whose arguments are not an object with the tool's coded INVALID_FIELD result", async () => {
    const c = await connection(version);
    const cases: [unknown, string][] = [
      ['to me', 'INVALID_FIELD'],
      [[1, 2], 'INVALID_FIELD'],
      [5, 'INVALID_FIELD'],
      [true, 'INVALID_FIELD'],
      [null, 'INVALID_VIA'],
    ];
    let id = 10;
    for (const [args, code] of cases) {
      c.stdin.write(rpc(++id, 'tools/call', c.withMeta({ name: 'send_notification', arguments: args })));
      const r = await c.answer(id);
      expect(r.error, JSON.stringify(r)).toBeUndefined();
      expect(r.result.isError).toBe(true);
      expect(r.result.structuredContent.error).toMatchObject({ code, ...(code === 'INVALID_FIELD' ? { path: '' } : {}) });
    }
    // The private key a set-aside travels under cannot be sent by a client.
    c.stdin.write(
      rpc(
        ++id,
        'tools/call',
        c.withMeta({
          name: 'list_banners',
          arguments: {},
          _meta: { ...(version === '2026-07-28' ? envelope : {}), 'dev.notify-mcp/arguments': 'x' },
        }),
      ),
    );
    expect((await c.answer(id)).result.structuredContent).toHaveProperty('banners');
    await c.end();
  });

  it('reports a __proto__ key at any depth as a field the tool does not take, instead of dropping it and sending', async () => {
    const c = await connection(version);
    // JSON.parse makes __proto__ an own key, as it arrives on the wire.
    const cases: [string, string, string][] = [
      ['send_notification', '{"via":"sms","to":"+14155550123","body":"x","__proto__":{"a":1}}', '/__proto__'],
      ['send_notification', '{"via":"email","to":["a@example.com",{"__proto__":"b@example.com"}],"subject":"s","body_html":"x"}', '/to/1'],
      ['show_banner', '{"text":"x","audience":"all","__proto__":{"severity":"critical"}}', '/__proto__'],
    ];
    let id = 30;
    for (const [name, args, path] of cases) {
      c.stdin.write(rpc(++id, 'tools/call', c.withMeta({ name, arguments: JSON.parse(args) })));
      const r = await c.answer(id);
      expect(r.result?.isError, JSON.stringify(r)).toBe(true);
      expect(r.result.structuredContent.error.path).toBe(path);
    }
    await c.end();
  });

  it('answers a batch, a line that is not JSON and a non-JSON-RPC value with JSON-RPC errors, and keeps serving', async () => {
    const c = await connection(version);
    c.stdin.write(`${JSON.stringify([JSON.parse(rpc(1, 'tools/list', c.withMeta({})))])}\n`);
    expect((await c.answer(null)).error).toMatchObject({ code: -32600, message: expect.stringContaining('batch') });
    c.stdin.write('this is not json\n');
    expect((await c.answer(null, 2)).error.code).toBe(-32700);
    c.stdin.write(`${JSON.stringify({ id: 7, hello: 'world' })}\n`);
    expect((await c.answer(7)).error.code).toBe(-32600);
    c.stdin.write(rpc(8, 'tools/list', c.withMeta({})));
    expect((await c.answer(8)).result.tools.length).toBeGreaterThan(0);
    await c.end();
  });

  it('reads a line led by a byte order mark or ended by CRLF, refuses invalid UTF-8 instead of replacing it, and keeps serving', async () => {
    const c = await connection(version);
    c.stdin.write(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(rpc(51, 'tools/list', c.withMeta({})).replace('\n', '\r\n'))]),
    );
    expect((await c.answer(51)).result.tools.length).toBeGreaterThan(0);
    // An SMS body with a stray byte: a lenient decode would send U+FFFD in its place.
    const line = rpc(
      52,
      'tools/call',
      c.withMeta({ name: 'send_notification', arguments: { via: 'sms', to: '+14155550123', body: 'Disk STRAY' } }),
    );
    const [head, tail] = line.split('STRAY') as [string, string];
    c.stdin.write(Buffer.concat([Buffer.from(head), Buffer.from([0xff]), Buffer.from(tail)]));
    expect((await c.answer(null)).error).toMatchObject({ code: -32700, message: expect.stringContaining('UTF-8') });
    c.stdin.write(rpc(53, 'tools/list', c.withMeta({})));
    expect((await c.answer(53)).result.tools.length).toBeGreaterThan(0);
    await c.end();
  });

  it('answers arguments holding a list of 400,000 items with the coded result, not a refusal', async () => {
    const c = await connection(version);
    c.stdin.write(
      rpc(
        61,
        'tools/call',
        c.withMeta({
          name: 'send_notification',
          arguments: { via: 'email', to: Array.from({ length: 400_000 }, () => 0), subject: 's', body_html: 'x' },
        }),
      ),
    );
    const r = await c.answer(61);
    expect(r.result?.isError, JSON.stringify(r).slice(0, 300)).toBe(true);
    expect(r.result.structuredContent.error.path).toMatch(/^\/to/);
    await c.end();
  });

  it('refuses a client name holding a lone surrogate with -32602 (it would be recorded mangled), and keeps serving', async () => {
    const c = await connection(version);
    const info = { name: 'bot\ud800', version: '1' };
    c.stdin.write(
      version === '2026-07-28'
        ? rpc(81, 'tools/list', { _meta: { ...envelope, 'io.modelcontextprotocol/clientInfo': info } })
        : rpc(81, 'initialize', { protocolVersion: version, capabilities: {}, clientInfo: info }),
    );
    expect((await c.answer(81)).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('holds a lone surrogate at character 3'),
    });
    c.stdin.write(rpc(82, 'tools/list', c.withMeta({})));
    expect((await c.answer(82)).result.tools.length).toBeGreaterThan(0);
    await c.end();
  });

  it('refuses a string id over 256 characters with id null instead of echoing it, and keeps serving', async () => {
    const c = await connection(version);
    const id = 'x'.repeat(500_000);
    c.stdin.write(rpc(id as unknown as number, 'tools/list', c.withMeta({})));
    const refused = await c.answer(null);
    expect(refused.error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('id is 500000 characters, over the limit of 256'),
    });
    expect(JSON.stringify(refused).length).toBeLessThan(400);
    c.stdin.write(rpc('y'.repeat(256) as unknown as number, 'tools/list', c.withMeta({})));
    expect((await c.answer('y'.repeat(256) as unknown as number)).result.tools.length).toBeGreaterThan(0);
    await c.end();
  });

  it('refuses a message of more than 10,000 object members with a JSON-RPC error, and keeps serving', async () => {
    const c = await connection(version);
    const keys = Object.fromEntries(Array.from({ length: 80_000 }, (_, i) => [`k${i}`, 1]));
    c.stdin.write(rpc(71, 'tools/call', c.withMeta({ name: 'send_notification', arguments: { via: 'sms', ...keys } })));
    expect((await c.answer(71)).error).toMatchObject({ code: -32600, message: expect.stringContaining('more than 10000 object members') });
    c.stdin.write(rpc(72, 'tools/list', c.withMeta({})));
    expect((await c.answer(72)).result.tools.length).toBeGreaterThan(0);
    await c.end();
  });

  it("answers arguments nested 400,000 deep with the tool's coded error, as over HTTP, instead of ending the process, and keeps serving", async () => {
    const c = await connection(version);
    // Under the 1 MiB limit; JSON.parse takes it (it does not recurse), a recursive walk would not.
    const depth = 400_000;
    c.stdin.write(
      rpc(41, 'tools/call', c.withMeta({ name: 'send_notification', arguments: 'DEEP' })).replace(
        '"DEEP"',
        '['.repeat(depth) + ']'.repeat(depth),
      ),
    );
    expect((await c.answer(41)).result.structuredContent.error).toMatchObject({
      code: 'INVALID_FIELD',
      message: expect.stringContaining('JSON object'),
    });
    c.stdin.write(rpc(42, 'tools/list', c.withMeta({})));
    expect((await c.answer(42)).result.tools.length).toBeGreaterThan(0);
    await c.end();
  });

  it('refuses a message over the limit with an error naming its id, instead of closing, and keeps serving', async () => {
    const c = await connection(version);
    // Over the SDK transport's own 10 MB buffer, which would close the connection.
    const huge = rpc(
      21,
      'tools/call',
      c.withMeta({ name: 'send_notification', arguments: { via: 'email', subject: 'x'.repeat(11 * 1024 * 1024) } }),
    );
    c.stdin.write(huge);
    const refused = await c.answer(21);
    expect(refused.error).toMatchObject({ code: -32600, message: expect.stringContaining('over the limit') });
    c.stdin.write(rpc(22, 'tools/list', c.withMeta({})));
    expect((await c.answer(22)).result.tools.length).toBeGreaterThan(0);
    await c.end();
  });
});
