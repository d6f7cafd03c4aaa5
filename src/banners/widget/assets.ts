/**
 * The browser side of banners as the HTTP transport serves it: GET /widget.js (the script
 * apps embed) and GET / (a demo page that runs it). Both files are read once, when HTTP
 * starts; the widget is sent gzipped to browsers that accept it, with a strong ETag.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NotifyError } from '../../core/errors.js';
import { parseAudienceParam } from '../feed.js';

/** An app may reuse the script this long without asking; after that a 304 costs a round trip. */
export const WIDGET_MAX_AGE_S = 300;

/**
 * Where the two files are: beside this module (src/, and tsc's dist/ where the build copies
 * them), or, from the bundled CLI (dist/cli.js, dist/cli-chunks/), in dist/banners/widget/.
 */
const LOCATIONS = ['./', '../banners/widget/', './banners/widget/'];

function assetPath(name: string): string {
  for (const dir of LOCATIONS) {
    const path = fileURLToPath(new URL(dir + name, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error(`${name} is missing beside ${fileURLToPath(import.meta.url)}: run \`npm run build\``);
}

interface Asset {
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

function asset(body: Buffer): Asset {
  return { body, gzip: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

export interface WidgetAssets {
  /** The widget script as served, and its gzipped size (the budget is 10 KB). */
  readonly script: Asset;
  /** `extra`: response headers from the transport (CORS for allowed origins). */
  serveScript(req: IncomingMessage, res: ServerResponse, extra?: Record<string, string>): void;
  serveDemo(req: IncomingMessage, res: ServerResponse, url: URL): void;
}

export function loadWidgetAssets(): WidgetAssets {
  const script = asset(readFileSync(assetPath('widget.js')));
  const demo = readFileSync(assetPath('demo.html'), 'utf8');

  return {
    script,
    serveScript(req, res, extra = {}) {
      const headers = {
        ...extra,
        'Content-Type': 'text/javascript; charset=utf-8',
        'Cache-Control': `public, max-age=${WIDGET_MAX_AGE_S}`,
        ETag: script.etag,
        Vary: extra.Vary ? `${extra.Vary}, Accept-Encoding` : 'Accept-Encoding',
        'X-Content-Type-Options': 'nosniff',
        // Embedded on other origins as a classic script; let pages with COEP load it too.
        'Cross-Origin-Resource-Policy': 'cross-origin',
      };
      if (req.headers['if-none-match']?.split(',').some((t) => t.trim().replace(/^W\//, '') === script.etag)) {
        res.writeHead(304, headers).end();
        return;
      }
      const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
      const body = gzip ? script.gzip : script.body;
      res.writeHead(200, { ...headers, 'Content-Length': String(body.length), ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) });
      res.end(req.method === 'HEAD' ? undefined : body);
    },
    serveDemo(req, res, url) {
      let audience: string;
      try {
        audience = parseAudienceParam(url.searchParams.get('audience') ?? 'all').join(',') || 'all';
      } catch (err) {
        if (!(err instanceof NotifyError)) throw err;
        const text = `${err.message} For example: /?audience=all,admins`;
        res.writeHead(400, {
          'Content-Type': 'text/plain; charset=utf-8',
          'Content-Length': String(Buffer.byteLength(text)),
          'X-Content-Type-Options': 'nosniff',
        });
        res.end(text);
        return;
      }
      // Segment names are [a-z0-9:_-] (parseAudienceParam checked): nothing to escape.
      const html = demo.replaceAll('{{audience}}', audience);
      res.writeHead(200, {
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Length': String(Buffer.byteLength(html)),
        'Cache-Control': 'no-cache',
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
      });
      res.end(req.method === 'HEAD' ? undefined : html);
    },
  };
}
