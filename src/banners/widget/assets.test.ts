/**
 * GET /widget.js and GET / over real HTTP (serveHttp in process): content types, the size
 * budget, ETag revalidation, gzip, the demo page's audience, and what neither may contain.
 * What the script does in a browser is test/browser/widget.test.ts.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../app.js';
import { loadConfig } from '../../config/config.js';
import { silentLogger } from '../../core/log.js';
import { serveHttp, type HttpHandle } from '../../transports/http/listener.js';

let app: App;
let http: HttpHandle;

beforeAll(async () => {
  app = await createApp(loadConfig({ NOTIFY_DATA_DIR: mkdtempSync(join(tmpdir(), 'notify-widget-assets-')) }), silentLogger);
  http = await serveHttp(app, { port: 0 });
});

afterAll(async () => {
  await http.close();
  await app.close();
});

describe('GET /widget.js', () => {
  it('is JavaScript, at most 10 KB gzipped, revalidated by ETag', async () => {
    const res = await fetch(`${http.url}/widget.js`, { headers: { 'Accept-Encoding': 'identity' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
    const source = await res.text();
    expect(source).toContain("attachShadow({ mode: 'open' })");

    const raw = await new Promise<Buffer>((resolve, reject) => {
      // fetch decodes gzip by itself; ask node:http for the bytes on the wire.
      import('node:http').then(({ get }) =>
        get(`${http.url}/widget.js`, { headers: { 'Accept-Encoding': 'gzip' } }, (r) => {
          expect(r.headers['content-encoding']).toBe('gzip');
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks)));
        }).on('error', reject),
      );
    });
    expect(raw.length).toBeLessThanOrEqual(10 * 1024);
    expect(gunzipSync(raw).toString('utf8')).toBe(source);

    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await fetch(`${http.url}/widget.js`, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
  });

  it('never writes markup from data: no innerHTML, outerHTML, insertAdjacentHTML or document.write', async () => {
    const source = await (await fetch(`${http.url}/widget.js`)).text();
    expect(source).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  it('is read-only', async () => {
    const res = await fetch(`${http.url}/widget.js`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('GET / (the demo page)', () => {
  it('runs the widget for the audience asked, default all', async () => {
    const page = await fetch(`${http.url}/`);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('<script src="widget.js" data-audience="all"></script>');
    const admins = await (await fetch(`${http.url}/?audience=all,admins,all`)).text();
    expect(admins).toContain('<script src="widget.js" data-audience="all,admins"></script>');
  });

  it('answers a malformed audience with 400 and an example', async () => {
    const res = await fetch(`${http.url}/?audience=${encodeURIComponent('"><script>')}`);
    expect(res.status).toBe(400);
    // Plain text that a browser may not sniff as HTML, although it quotes the input.
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toMatch(/^audience .* is not a segment name: .* For example: \/\?audience=all,admins$/);
  });

  it('has no admin actions: no form, no button, no MCP endpoint', async () => {
    const html = await (await fetch(`${http.url}/`)).text();
    expect(html).not.toMatch(/<form|<button|\/mcp|show_banner\(|dismiss_banner\(/);
  });
});
