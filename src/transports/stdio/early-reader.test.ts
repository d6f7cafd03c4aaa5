/**
 * The early reader over injected streams: it answers an opening `server/discover` and
 * `initialize` with the answers the server itself gives (recorded here from a first
 * connection, as the build records them), leaves everything else to the SDK, and once the
 * wire takes over every request is answered exactly once, in either era.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../app.js';
import { loadConfig } from '../../config/config.js';
import { createLogger } from '../../core/log.js';
import { earlyReaderOn, earlyResult, startEarlyReader, type EarlyAnswers } from './early-reader.js';
import { serveStdio } from './stdio.js';

const MODERN = '2026-07-28';
const envelope = (name = 'ai-sdk') => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name, version: '7' },
});
const line = (message: object) => JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n';
const discover = (id: number | string, name?: string) => ({ id, method: 'server/discover', params: { _meta: envelope(name) } });
const initialize = (id: number | string, protocolVersion = '2025-11-25', name = 'ai-sdk') => ({
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name, version: '7' } },
});

let app: App;
const warnings: string[] = [];
beforeAll(async () => {
  const log = createLogger('warn', (l) => void warnings.push(l));
  app = await createApp(loadConfig({ NOTIFY_DATA_DIR: mkdtempSync(join(tmpdir(), 'early-')) }), log);
});
afterAll(async () => {
  await app?.close();
});

/** One stdio connection: the lines written before it serves, then the rest; every message out, in order. */
async function connection(opts: { answers?: EarlyAnswers; before: object[]; after?: object[]; endBefore?: boolean }) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const out: Record<string, any>[] = [];
  const early: Record<string, any>[] = [];
  let buf = '';
  let serving = false;
  stdout.setEncoding('utf8').on('data', (c: string) => {
    buf += c;
    for (let nl; (nl = buf.indexOf('\n')) >= 0; buf = buf.slice(nl + 1)) {
      const m = JSON.parse(buf.slice(0, nl));
      out.push(m);
      if (!serving) early.push(m);
    }
  });
  if (opts.answers) startEarlyReader(stdin, stdout, opts.answers);
  for (const m of opts.before) stdin.write(line(m));
  if (opts.endBefore) stdin.end();
  // What the early reader answers, it answers before the server exists.
  await new Promise((r) => setImmediate(r));
  serving = true;
  const { closed } = await serveStdio(app, { stdin, stdout });
  for (const m of opts.after ?? []) stdin.write(line(m));
  if (!opts.endBefore) stdin.end();
  await closed;
  return { out, early };
}

/** What the server answers itself, recorded as the build does (scripts/early-answers.mjs). */
async function recorded(): Promise<EarlyAnswers> {
  const d = await connection({ before: [discover(1)] });
  const versions = ['2025-11-25', '2025-06-18'];
  const i = await connection({ before: versions.map((v, n) => initialize(n + 1, v)) });
  return {
    discover: { versions: d.out[0]!.result.supportedVersions, result: d.out[0]!.result },
    initialize: Object.fromEntries(versions.map((v, n) => [v, i.out[n]!.result])),
  };
}

const ids = (ms: Record<string, any>[]) => ms.filter((m) => 'id' in m).map((m) => m.id);

describe('the early reader', () => {
  let answers: EarlyAnswers;
  beforeAll(async () => {
    answers = await recorded();
  });

  it("answers server/discover then initialize before the server loads, and the SDK's own answers are dropped, not sent twice", async () => {
    warnings.length = 0;
    const { out, early } = await connection({
      answers,
      before: [discover(1), initialize(2)],
      after: [{ method: 'notifications/initialized' }, { id: 3, method: 'tools/list', params: {} }],
    });
    expect(ids(early)).toEqual([1, 2]);
    expect(early[0]!.result).toEqual(answers.discover.result);
    expect(early[1]!.result.protocolVersion).toBe('2025-11-25');
    expect(ids(out)).toEqual([1, 2, 3]);
    expect(out[2]!.result.tools[0].name).toBe('send_notification');
    // The SDK answered the replayed requests with exactly what the early reader had sent.
    expect(warnings.filter((w) => w.includes('early answer'))).toEqual([]);
  });

  it('leaves the era to the SDK: server/discover then a modern request is served as 2026-07-28', async () => {
    const { out, early } = await connection({
      answers,
      before: [discover('d')],
      after: [{ id: 'l', method: 'tools/list', params: { _meta: envelope() } }],
    });
    expect(ids(early)).toEqual(['d']);
    expect(ids(out)).toEqual(['d', 'l']);
    expect(out[1]!.result.ttlMs).toBeGreaterThan(0);
  });

  it('answers nothing after a line it does not answer, so answers keep the order the server would give', async () => {
    const { out, early } = await connection({
      answers,
      before: [{ id: 1, method: 'tools/list', params: { _meta: envelope() } }, discover(2)],
    });
    expect(early).toEqual([]);
    expect(ids(out)).toEqual([1, 2]);
  });

  it('reads everything sent before input ended, and still answers it all', async () => {
    const { out, early } = await connection({
      answers,
      before: [initialize(1), { method: 'notifications/initialized' }, { id: 2, method: 'tools/list', params: {} }],
      endBefore: true,
    });
    expect(ids(early)).toEqual([1]);
    expect(ids(out)).toEqual([1, 2]);
  });

  it('leaves to the SDK and its inbound screen what they might refuse or answer otherwise', () => {
    const state = () => ({ initialized: false });
    const msg = (m: object) => ({ jsonrpc: '2.0', ...m });
    expect(earlyResult(answers, msg(initialize(1)), state())?.method).toBe('initialize');
    expect(earlyResult(answers, msg(discover(1)), state())?.method).toBe('server/discover');
    // An unknown version: the SDK negotiates its own.
    expect(earlyResult(answers, msg(initialize(1, '2023-01-01')), state())).toBeUndefined();
    expect(
      earlyResult(
        answers,
        msg({
          id: 1,
          method: 'server/discover',
          params: { _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
        }),
        state(),
      ),
    ).toBeUndefined();
    // A discover without the envelope, an initialize without clientInfo, a client name the screen refuses.
    expect(earlyResult(answers, msg({ id: 1, method: 'server/discover', params: {} }), state())).toBeUndefined();
    expect(
      earlyResult(answers, msg({ id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }), state()),
    ).toBeUndefined();
    expect(earlyResult(answers, msg(initialize(1, '2025-11-25', 'x'.repeat(300))), state())).toBeUndefined();
    expect(earlyResult(answers, msg(initialize(1, '2025-11-25', 'bad \ud800 name')), state())).toBeUndefined();
    expect(earlyResult(answers, msg(initialize(1, '2025-11-25', '')), state())).toBeUndefined();
    expect(
      earlyResult(
        answers,
        JSON.parse(
          '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"__proto__":{}},"clientInfo":{"name":"a","version":"1"}}}',
        ),
        state(),
      ),
    ).toBeUndefined();
    // Not a request: no id, a fractional id, an extra member, another method.
    expect(earlyResult(answers, msg({ method: 'initialize', params: initialize(1).params }), state())).toBeUndefined();
    expect(earlyResult(answers, msg({ ...initialize(1), id: 1.5 }), state())).toBeUndefined();
    expect(earlyResult(answers, msg({ ...initialize(1), extra: 1 }), state())).toBeUndefined();
    expect(earlyResult(answers, msg({ id: 1, method: 'tools/list', params: {} }), state())).toBeUndefined();
    // After an initialize, the SDK decides what a second one or a discover gets.
    const s = state();
    expect(earlyResult(answers, msg(initialize(1)), s)).toBeDefined();
    expect(earlyResult(answers, msg(initialize(2)), s)).toBeUndefined();
    expect(earlyResult(answers, msg(discover(3)), s)).toBeUndefined();
  });

  it('says so in the log when the server would have answered otherwise', async () => {
    warnings.length = 0;
    const stale: EarlyAnswers = {
      ...answers,
      discover: { ...answers.discover, result: { ...(answers.discover.result as object), instructions: 'stale' } },
    };
    const { out } = await connection({ answers: stale, before: [discover(1)] });
    expect(ids(out)).toEqual([1]);
    expect(warnings.join('\n')).toContain('early answer differed from the server');
  });

  it('is taken over only by a wire on its own input', () => {
    const stdin = new PassThrough();
    startEarlyReader(stdin, new PassThrough(), answers);
    expect(earlyReaderOn(new PassThrough())).toBeUndefined();
    expect(earlyReaderOn(stdin)).toBeDefined();
    expect(earlyReaderOn(stdin)).toBeUndefined();
  });
});
