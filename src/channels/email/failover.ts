/**
 * Ordered SMTP relays (SMTP_URL=smtps://a…,smtps://b…): a mail goes to the first, and to the
 * next only when the one before clearly did not accept it: no connection, a TLS or login
 * failure, a 4xx or 5xx reply before the end of DATA. Once the whole message was handed to a
 * relay (./smtp.ts knows when), whatever follows ends the attempt there: a relay that may
 * hold the mail is never followed by another, or the person could get it twice.
 */
import type { Logger } from '../../core/log.js';
import { ProviderError } from '../../providers/errors.js';
import type { Provider, ProviderReceipt, SendContext } from '../../providers/types.js';
import { relayName } from './relays.js';
import { handedOverErrors, type EmailPayload } from './smtp.js';

/** Whether the next relay may be tried after `err`: nothing was handed over, and the send's budget and caller still stand. */
function mayFailOver(err: unknown, ctx: SendContext): boolean {
  if (ctx.signal.aborted || ctx.cancel?.aborted) return false;
  if (!(err instanceof ProviderError) || handedOverErrors.has(err)) return false;
  return err.name === 'ProviderTransientError' || err.name === 'ProviderRejectedError';
}

export function failoverProvider(
  relays: readonly { url: string; provider: Provider<EmailPayload> }[],
  log: Logger,
): Provider<EmailPayload> {
  return {
    name: 'smtp',
    callsStarting: true,
    async send(payload, ctx): Promise<ProviderReceipt> {
      for (let i = 0; ; i++) {
        const relay = relays[i]!;
        try {
          const receipt = await relay.provider.send(payload, ctx);
          return i === 0
            ? receipt
            : { ...receipt, providerStatus: `${receipt.providerStatus ?? 'accepted'} (relay ${relayName(relay.url)})` };
        } catch (err) {
          if (i === relays.length - 1 || !mayFailOver(err, ctx)) throw err;
          // An attempt of its own, naming this relay (./smtp.ts stamped it): the log shows both relays, each with its outcome.
          ctx.failedOver?.(err as ProviderError);
          const next = relays[i + 1]!;
          log.warn('smtp failover', {
            notificationId: ctx.notificationId,
            from: relayName(relay.url),
            to: relayName(next.url),
            code: (err as ProviderError).vendorCode,
          });
        }
      }
    },
    async close() {
      await Promise.all(relays.map((r) => r.provider.close?.()));
    },
  };
}
