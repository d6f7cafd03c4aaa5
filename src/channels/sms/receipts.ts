/**
 * Twilio's status callbacks (form-encoded MessageSid, MessageStatus, ErrorCode…), verified
 * with the twilio package's own validateRequest against the auth token and the URL Twilio
 * was given, and read in this server's words.
 */
import type { ReceiptEvent } from '../../store/types.js';
import type { InboundCallback, ReceiptReading } from '../channel.js';

/** Where Twilio posts: NOTIFY_PUBLIC_URL + /webhooks/ + this. */
export const TWILIO_RECEIPT_PATH = 'twilio';

/** The query parameter of a send's StatusCallback that names its notification. */
export const NOTIFICATION_PARAM = 'notification';
const NOTIFICATION_ID = /^ntf_[0-9a-f]{32}$/;

/** The StatusCallback of notification `id`: the webhook URL with the id, which Twilio's signature then covers. */
export function statusCallbackFor(callbackUrl: string, id: string): string {
  return `${callbackUrl}?${NOTIFICATION_PARAM}=${encodeURIComponent(id)}`;
}

/**
 * Twilio's message statuses. Still with Twilio (`accepted`, `scheduled`, `queued`,
 * `sending`) is queued; `sent` is handed to the carrier; `read` (WhatsApp) implies delivered;
 * `canceled` (a scheduled message) was never sent. Inbound statuses (`receiving`,
 * `received`) are not ours to track.
 */
const TWILIO_STATUSES: Readonly<Record<string, ReceiptEvent>> = {
  accepted: 'queued',
  scheduled: 'queued',
  queued: 'queued',
  sending: 'queued',
  sent: 'sent',
  partially_delivered: 'sent',
  delivered: 'delivered',
  read: 'delivered',
  undelivered: 'undelivered',
  failed: 'failed',
  canceled: 'failed',
};

/** `authToken` undefined (no live credentials): nothing can be verified. */
export async function readTwilioReceipt(
  authToken: string | undefined,
  callbackUrl: string | undefined,
  cb: InboundCallback,
): Promise<ReceiptReading> {
  const signature = cb.headers['x-twilio-signature'];
  if (!authToken || !callbackUrl || typeof signature !== 'string' || signature === '') return { verified: false };
  const params = Object.fromEntries(new URLSearchParams(cb.body));
  const twilio = (await import('twilio')).default;
  // Over the full URL, query included: the notification id in it is only trusted signed.
  if (!twilio.validateRequest(authToken, signature, callbackUrl + cb.search, params)) return { verified: false };
  const sid = params.MessageSid ?? params.SmsSid;
  const status = (params.MessageStatus ?? params.SmsStatus)?.toLowerCase();
  // Own keys only: a status such as `constructor` would read Object.prototype's member.
  const event = status !== undefined && Object.hasOwn(TWILIO_STATUSES, status) ? TWILIO_STATUSES[status] : undefined;
  if (!sid || !status || !event) return { verified: true, report: null };
  const notificationId = new URLSearchParams(cb.search).get(NOTIFICATION_PARAM);
  return {
    verified: true,
    report: {
      providerMessageId: sid,
      event,
      providerStatus: status,
      code: params.ErrorCode || null,
      ...(notificationId !== null && NOTIFICATION_ID.test(notificationId) ? { notificationId } : {}),
    },
  };
}
