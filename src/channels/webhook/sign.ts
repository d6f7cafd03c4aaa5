/**
 * Standard Webhooks v1 (standardwebhooks.com): the signed content is
 * `${webhook-id}.${webhook-timestamp}.${body}`, signed with HMAC-SHA256 under the secret's
 * bytes (the base64 after `whsec_`), and sent as `webhook-signature: v1,<base64>`.
 */
import { createHmac } from 'node:crypto';

/** What the delivery log and a dry run show in place of a signature or a token. */
export const REDACTED = '<redacted>';

export function standardSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
