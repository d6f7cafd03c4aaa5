/** POST /webhooks/<path>: provider receipts, authenticated by the provider's signature (webhooks.ts). */
import type { ConfiguredChannel } from '../../../channels/channel.js';
import type { Logger } from '../../../core/log.js';
import type { ReceiptDeps } from '../../../notification/status-receipt.js';
import { serveWebhook, WEBHOOK_ROUTE } from '../webhooks.js';
import type { Route } from './route.js';

export function webhookRoute(deps: ReceiptDeps & { channels: readonly ConfiguredChannel[]; log: Logger }): Route {
  return (req, res, url) => {
    const hook = WEBHOOK_ROUTE.exec(url.pathname);
    return hook ? { name: 'webhooks', serve: () => serveWebhook(req, res, url, hook[1]!, deps) } : undefined;
  };
}
