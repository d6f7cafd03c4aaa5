/**
 * Active banners as MCP resources, `banners://active/{audience}`: one segment per URI, its
 * contents the JSON GET /banners answers for it; listed, readable, and pushed to subscribers
 * through the process's banner hub in both eras (registerBannerResources).
 */
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type Server } from '@modelcontextprotocol/server';
import type { BannersPort } from '../store/ports/banners.js';
import { feedCacheFor, MAX_AUDIENCES } from '../banners/feed.js';
import { AUDIENCE_RE, LIST_LIMIT } from '../banners/model.js';
import type { BannerHub } from '../banners/hub.js';
import { FeedRefusal, FeedRequestTooLongError } from '../banners/feed-errors.js';

export const BANNER_URI_TEMPLATE = 'banners://active/{audience}';
const URI_RE = /^banners:\/\/active\/([^/?#]+)$/;
const MIME = 'application/json';

export const bannerUri = (audience: string) => `banners://active/${audience}`;

/** The segment a banners:// URI names, or undefined when it names none. */
export function audienceOfUri(uri: string): string | undefined {
  const m = URI_RE.exec(uri);
  if (!m) return undefined;
  let audience: string;
  try {
    audience = decodeURIComponent(m[1]!);
  } catch {
    return undefined;
  }
  return AUDIENCE_RE.test(audience) ? audience : undefined;
}

function requireAudience(uri: string): string {
  const audience = audienceOfUri(uri);
  if (audience === undefined) {
    throw new ResourceNotFoundError(
      uri,
      `No resource ${JSON.stringify(uri)}: use ${BANNER_URI_TEMPLATE} with one segment name (a-z 0-9 : _ -), e.g. banners://active/all`,
    );
  }
  return audience;
}

/**
 * Coalesces a hub's banner events into one `notify(uri)` per URI per turn, and shares one
 * hub subscription among every holder of a URI (several listen streams on one handler would
 * otherwise each publish, and each stream receive every update once per holder).
 */
export class ResourceWatch {
  private readonly held = new Map<string, { count: number; ready: Promise<() => void> }>();
  private readonly due = new Set<string>();
  /** The hub claims of the acquisitions not released yet. */
  private readonly claims = new Set<() => void>();

  constructor(
    private readonly hub: BannerHub,
    private readonly notify: (uri: string) => void,
  ) {}

  /**
   * Watches `uris` (invalid ones are ignored) for `client` (feedClientKey) until the function
   * it resolves with is called. Resolves once the hub holds their state, so no change after
   * that is missed. Throws a FeedRefusal synchronously, before anything is followed, when
   * they are more than one request may name or the client or the hub has no room for them,
   * so that a transport can answer the request with it instead of passing it on.
   */
  acquire(uris: readonly string[], client: string): Promise<() => void> {
    const mine = [...new Set(uris)].filter((u) => audienceOfUri(u) !== undefined);
    if (mine.length > MAX_AUDIENCES) throw new FeedRequestTooLongError(mine.length, MAX_AUDIENCES);
    const claim = this.hub.claim(
      client,
      mine.map((u) => audienceOfUri(u)!),
    );
    const unclaim = () => {
      this.claims.delete(unclaim);
      claim();
    };
    this.claims.add(unclaim);
    return this.hold(mine).then(
      (release) => () => {
        release();
        unclaim();
      },
      (err: unknown) => {
        unclaim();
        throw err;
      },
    );
  }

  private async hold(mine: string[]): Promise<() => void> {
    const ready: Promise<unknown>[] = [];
    for (const uri of mine) {
      let entry = this.held.get(uri);
      if (entry) entry.count++;
      else this.held.set(uri, (entry = { count: 1, ready: this.follow(uri) }));
      ready.push(entry.ready);
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      for (const uri of mine) {
        const entry = this.held.get(uri);
        // Gone already: releaseAll ended it.
        if (!entry || --entry.count > 0) continue;
        this.held.delete(uri);
        void entry.ready.then(
          (stop) => stop(),
          () => {},
        );
      }
    };
    try {
      await Promise.all(ready);
    } catch (err) {
      release();
      throw err;
    }
    return release;
  }

  releaseAll(): void {
    for (const unclaim of [...this.claims]) unclaim();
    for (const entry of this.held.values())
      void entry.ready.then(
        (stop) => stop(),
        () => {},
      );
    this.held.clear();
  }

  private follow(uri: string): Promise<() => void> {
    return this.hub.subscribe([audienceOfUri(uri)!], {
      snapshot: () => {},
      event: () => {
        if (this.due.has(uri)) return;
        this.due.add(uri);
        queueMicrotask(() => {
          this.due.delete(uri);
          if (this.held.has(uri)) this.notify(uri);
        });
      },
    });
  }
}

/** A refusal of the feed as the JSON-RPC error of request `id`, its code in `data`. */
export function feedRefusalMessage(
  id: unknown,
  refusal: FeedRefusal,
): { jsonrpc: '2.0'; id: unknown; error: { code: number; message: string; data: ReturnType<FeedRefusal['body']> } } {
  return { jsonrpc: '2.0', id: id ?? null, error: { code: refusalRpcCode(refusal), message: refusal.message, data: refusal.body() } };
}

/** The answer to a listen for banner resources a caller is not offered (NOTIFY_TOOLS, NOTIFY_TOKEN_TOOLS): as a server without resources answers. */
export function withheldListenMessage(id: unknown): { jsonrpc: '2.0'; id: unknown; error: { code: number; message: string } } {
  return {
    jsonrpc: '2.0',
    id: id ?? null,
    error: { code: ProtocolErrorCode.MethodNotFound, message: 'Method not found: this server offers no resources to this client' },
  };
}

/** Too many URIs is the request's own fault (invalid params); a full feed is the server's state. */
const refusalRpcCode = (refusal: FeedRefusal) => (refusal.code === 'TOO_LONG' ? ProtocolErrorCode.InvalidParams : -32000);

/** The URIs a `subscriptions/listen` request asks updates for (none for any other message). */
export function listenedUris(message: unknown): string[] {
  const m = message as { method?: unknown; params?: { notifications?: { resourceSubscriptions?: unknown } } } | null;
  if (m?.method !== 'subscriptions/listen') return [];
  const uris = m.params?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) ? uris.filter((u): u is string => typeof u === 'string') : [];
}

/**
 * resources/list, resources/templates/list and resources/read on `server`; on a 2025-era
 * instance also resources/subscribe and unsubscribe, pushed through `hub` until the
 * connection closes. The server must declare `resources: { subscribe: true }`.
 *
 *   2025-11-25   resources/subscribe + unsubscribe on the session (handlers below), each
 *                change sent as notifications/resources/updated
 *   2026-07-28   subscriptions/listen with resourceSubscriptions: the SDK's serving entry
 *                answers the listen itself, so the transports show us its URIs
 *                (listenedUris) and publish the updates (ResourceWatch)
 */
export function registerBannerResources(
  server: Server,
  deps: {
    store: BannersPort;
    now: () => number;
    hub: BannerHub;
    era: 'legacy' | 'modern' /** feedClientKey of the connection. */;
    client: string;
  },
): void {
  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: [
      {
        uriTemplate: BANNER_URI_TEMPLATE,
        name: 'active-banners',
        title: 'Active banners of a segment',
        description:
          'The active banners of one audience segment (exact name; all is a segment, not a wildcard), most severe first, as GET /banners answers.',
        mimeType: MIME,
      },
    ],
  }));

  server.setRequestHandler('resources/list', async () => {
    const rows = await deps.store.listBanners({ status: 'active', now: deps.now(), limit: LIST_LIMIT });
    const audiences = [...new Set(rows.map((b) => b.audience))].sort();
    return {
      resources: audiences.map((a) => ({ uri: bannerUri(a), name: `banners-${a}`, title: `Active banners for ${a}`, mimeType: MIME })),
    };
  });

  server.setRequestHandler('resources/read', async (request) => {
    const { uri } = request.params;
    const audience = requireAudience(uri);
    const { body } = await feedCacheFor(deps.store).render([audience], deps.now());
    return { contents: [{ uri, mimeType: MIME, text: body.toString('utf8') }] };
  });

  // 2026-07-28 has no resources/subscribe: its listen streams are served by the transports.
  if (deps.era !== 'legacy') return;
  const watch = new ResourceWatch(deps.hub, (uri) => void server.sendResourceUpdated({ uri }).catch(() => {}));
  // Held as promises, so that two subscribes of one URI racing each other acquire it once.
  const subscribed = new Map<string, Promise<() => void>>();
  server.setRequestHandler('resources/subscribe', async (request) => {
    const { uri } = request.params;
    requireAudience(uri);
    try {
      if (!subscribed.has(uri)) subscribed.set(uri, watch.acquire([uri], deps.client));
      await subscribed.get(uri);
    } catch (err) {
      subscribed.delete(uri);
      if (err instanceof FeedRefusal) throw new ProtocolError(refusalRpcCode(err), err.message, err.body());
      throw err;
    }
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', async (request) => {
    const held = subscribed.get(request.params.uri);
    subscribed.delete(request.params.uri);
    (await held)?.();
    return {};
  });
  const previous = server.onclose;
  server.onclose = () => {
    watch.releaseAll();
    subscribed.clear();
    previous?.();
  };
}
