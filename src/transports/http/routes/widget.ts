/** GET /widget.js (the banner widget apps embed) and GET / (its demo page): static, never a token. */
import type { WidgetAssets } from '../../../banners/widget/assets.js';
import { sendJson } from '../banner-feed.js';
import type { FeedCors } from '../cors.js';
import type { Route } from './route.js';

export function widgetRoute(deps: { widget: WidgetAssets; cors: FeedCors }): Route {
  return (req, res, url) => {
    const path = url.pathname;
    if (path !== '/' && path !== '/widget.js') return undefined;
    return {
      name: 'widget',
      serve() {
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          return sendJson(res, 405, { error: { code: 'METHOD_NOT_ALLOWED', message: `${path} is read-only` } }, { Allow: 'GET, HEAD' });
        }
        return path === '/' ? deps.widget.serveDemo(req, res, url) : deps.widget.serveScript(req, res, deps.cors.headers(req));
      },
    };
  };
}
