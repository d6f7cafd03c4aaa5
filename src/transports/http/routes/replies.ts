/** POST to a channel's inbound path (Slack clicks, SMS replies): authenticated by the vendor's signature (../replies.ts). */
import type { ConfiguredChannel } from '../../../channels/channel.js';
import type { InboundPath } from '../../../channels/inbound.js';
import type { ReplyDeps } from '../../../notification/replies.js';
import { serveInbound } from '../replies.js';
import type { Route } from './route.js';

export function replyRoute(deps: ReplyDeps & { channels: readonly ConfiguredChannel[] }): Route {
  const paths = new Map(
    deps.channels.flatMap((c) => (c.inbound ? [[c.inbound.path, c as ConfiguredChannel & { inbound: InboundPath }] as const] : [])),
  );
  return (req, res, url) => {
    const channel = paths.get(url.pathname);
    return channel ? { name: 'replies', serve: () => serveInbound(req, res, url, channel, deps) } : undefined;
  };
}
