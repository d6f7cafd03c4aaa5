/**
 * The banner feed for browser apps: GET /banners (a snapshot, banner-feed.ts) and
 * GET /banners/stream (SSE, banner-stream.ts), with CORS for NOTIFY_FEED_ORIGINS, and the
 * preflight of every path a browser app on another origin may read.
 */
import type { BannerHub } from '../../../banners/hub.js';
import { feedClientKey } from '../../../banners/feed-client.js';
import type { Store } from '../../../store/types.js';
import { serveBannerFeed } from '../banner-feed.js';
import { serveBannerStream, type OpenStreams, type StreamLimits } from '../banner-stream.js';
import type { FeedCors } from '../cors.js';
import type { RequestAuth } from '../request-auth.js';
import { admitRead } from './read.js';
import type { Route } from './route.js';

/** Paths a browser app on another origin may read (CORS through NOTIFY_FEED_ORIGINS). */
export const FEED_PATHS = new Set(['/banners', '/banners/stream', '/widget.js']);

export function preflightRoute(cors: FeedCors): Route {
  return (req, res, url) =>
    FEED_PATHS.has(url.pathname) && req.method === 'OPTIONS' ? { name: 'other', serve: () => cors.preflight(req, res) } : undefined;
}

export interface FeedRouteDeps {
  auth: RequestAuth;
  cors: FeedCors;
  store: Store;
  now: () => number;
  /** NOTIFY_READ_AUTH=1: a snapshot is the reader's own, not a shared cache's. */
  privateCache: boolean;
  hub: BannerHub;
  streams: OpenStreams;
  limits: StreamLimits;
}

export function feedRoute(deps: FeedRouteDeps): Route {
  return (req, res, url) => {
    const path = url.pathname;
    if (path === '/banners') {
      return {
        name: 'banners',
        async serve() {
          const headers = deps.cors.headers(req);
          if (admitRead(req, res, path, deps.auth, headers) === null) return;
          return serveBannerFeed(req, res, url, { store: deps.store, now: deps.now, privateCache: deps.privateCache, headers });
        },
      };
    }
    if (path === '/banners/stream') {
      return {
        name: 'banners_stream',
        async serve() {
          const headers = deps.cors.headers(req);
          const token = admitRead(req, res, path, deps.auth, headers, url.searchParams.get('access_token'));
          if (token === null) return;
          const client = feedClientKey(token?.client ?? deps.auth.presentedClient(req), req.socket.remoteAddress);
          return serveBannerStream(req, res, url, { hub: deps.hub, streams: deps.streams, limits: deps.limits, headers, client });
        },
      };
    }
    return undefined;
  };
}
