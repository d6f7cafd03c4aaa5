/**
 * Issue 16 soak: one load request ended in ECONNRESET with no answer. A keep-alive client
 * reuses an idle socket until the time the server advertises (`Keep-Alive: timeout=N`);
 * if the server closes at exactly that time, a client whose timers run late under load
 * sends its POST into a socket being closed and loses it. The server must hold an idle
 * socket open past what it advertises.
 */
import { mkdtempSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/core/log.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';

const ADVERTISED_MS = 1_000;

/** Reads one whole HTTP response (Content-Length framed) from a keep-alive socket. */
function readResponse(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      const end = buf.indexOf('\r\n\r\n');
      const len = /content-length: (\d+)/i.exec(buf)?.[1];
      if (end >= 0 && len !== undefined && buf.length >= end + 4 + Number(len)) {
        socket.off('data', onData).off('close', onClose);
        resolve(buf);
      }
    };
    const onClose = () => reject(new Error(`socket closed; got ${JSON.stringify(buf)}`));
    socket.on('data', onData).once('close', onClose);
  });
}

describe('HTTP keep-alive', () => {
  let app: App;
  let http: HttpHandle;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-keepalive-'));
    app = await createApp(loadConfig({ NOTIFY_DATA_DIR: dir, HOME: dir }), silentLogger);
    http = await serveHttp(app, { port: 0, keepAliveTimeoutMs: ADVERTISED_MS });
  });
  afterAll(async () => {
    await http?.close();
    await app?.close();
  });

  it('holds an idle socket past the advertised timeout, so a late reuse still gets its answer', async () => {
    const socket = connect(http.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const get = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${http.port}\r\n\r\n`;
    socket.write(get);
    const first = await readResponse(socket);
    expect(first).toMatch(/^HTTP\/1\.1 200/);
    expect(first).toMatch(/\r\nKeep-Alive: timeout=1\r\n/i);
    // A client a little late (its event loop lagging) reuses the socket past the advertised second.
    await new Promise((r) => setTimeout(r, ADVERTISED_MS + 1_200));
    expect(socket.destroyed).toBe(false);
    socket.write(get);
    expect(await readResponse(socket)).toMatch(/^HTTP\/1\.1 200/);
    socket.destroy();
  });
});
