/** GET /healthz and GET /metrics (Prometheus text): read-only, a token only with NOTIFY_READ_AUTH=1. */
import type { Metrics } from '../../../mcp/metrics.js';
import { sendJson } from '../banner-feed.js';
import type { RequestAuth } from '../request-auth.js';
import { admitRead } from './read.js';
import type { Route } from './route.js';

export function opsRoute(deps: { auth: RequestAuth; metrics: Metrics }): Route {
  return (req, res, url) => {
    const path = url.pathname;
    if (path !== '/healthz' && path !== '/metrics') return undefined;
    return {
      name: path === '/healthz' ? 'healthz' : 'metrics',
      async serve() {
        if (admitRead(req, res, path, deps.auth) === null) return;
        if (path === '/healthz') return sendJson(res, 200, { ok: true }, { 'Cache-Control': 'no-store' });
        const text = await deps.metrics.registry.metrics();
        res.writeHead(200, { 'Content-Type': deps.metrics.registry.contentType, 'Cache-Control': 'no-store' });
        res.end(text);
      },
    };
  };
}
