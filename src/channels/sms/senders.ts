/**
 * Twilio senders in order (TWILIO_FROM=+14155550100,+14155550101): a message goes from the
 * first, and from the next only when Twilio refused it for a reason that belongs to the
 * sender (the number cannot send there, is not the account's, or its queue is full). A
 * refusal that belongs to the recipient or the message, a rate limit or a network failure is
 * the same from any sender, so it ends there; Twilio answered, so nothing was sent.
 */
import type { Logger } from '../../core/log.js';
import { ProviderError, ProviderRejectedError } from '../../providers/errors.js';
import type { Provider, ProviderReceipt } from '../../providers/types.js';
import { digestOf } from '../../store/audit.js';
import type { SmsPayload } from './twilio.js';

/**
 * Twilio errors about the From number: 21212 invalid From, 21606 From cannot send to this
 * destination, 21611 From's queue is full, 21659 From is not a Twilio number of the
 * account, 21660 From and account mismatch.
 */
export const SENDER_ERRORS: ReadonlySet<number> = new Set([21212, 21606, 21611, 21659, 21660]);

export function senderFailover(provider: Provider<SmsPayload>, senders: readonly string[], log: Logger): Provider<SmsPayload> {
  return {
    ...provider,
    async send(payload, ctx): Promise<ProviderReceipt> {
      // A message sent through a messaging service has no From: Twilio picks the sender.
      const first = payload.From === undefined ? -1 : senders.indexOf(payload.From);
      if (first === -1) return provider.send(payload, ctx);
      for (let i = first; ; i++) {
        const from = senders[i]!;
        // A later sender's request is the recorded payload with another From: it gets its own digest (the audit's).
        const request = i === first ? payload : { ...payload, From: from };
        const endpoint = i === first ? { name: from } : { name: from, digest: digestOf(request) };
        try {
          const receipt = await provider.send(request, ctx);
          return i === first ? receipt : { ...receipt, endpoint, providerStatus: `${receipt.providerStatus ?? 'accepted'} (from ${from})` };
        } catch (err) {
          if (err instanceof ProviderError) err.endpoint = endpoint;
          const senderFault = err instanceof ProviderRejectedError && SENDER_ERRORS.has(Number(err.vendorCode));
          if (!senderFault || i + 1 >= senders.length || ctx.signal.aborted || ctx.cancel?.aborted) throw err;
          // An attempt of its own in the log, naming this sender.
          ctx.failedOver?.(err);
          log.warn('twilio sender failover', { notificationId: ctx.notificationId, from, to: senders[i + 1], code: err.vendorCode });
        }
      }
    },
  };
}
