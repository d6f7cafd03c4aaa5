/**
 * Answer tokens (DESIGN section 11). A token is derived, not drawn: HMAC-SHA256 under the
 * store's answer key over the notification id and the recipient (or message) it is for, so a
 * payload rebuilt for an approved or scheduled release carries the same links, byte for
 * byte, as the one approved. 256 bits, base64url; the store keeps only its SHA-256.
 */
import { createHmac, hash } from 'node:crypto';

/** Makes the answer link of a notification's message: `recipient` is `''` for a message every recipient shares. */
export type AnswerLinker = (notificationId: string, recipient: string) => string;

export function answerToken(key: string, notificationId: string, recipient: string): string {
  // A separator no id holds, so (id, recipient) pairs cannot collide by concatenation.
  return createHmac('sha256', key).update(`${notificationId}\n${recipient}`).digest('base64url');
}

/** What the store keeps of a token. */
export const tokenSha256 = (token: string): string => hash('sha256', token, 'hex');

/** A token's shape, checked before any lookup: 43 base64url characters. */
export const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Links under `<publicUrl>/answer/`. */
export function answerLinker(publicUrl: string, key: string): AnswerLinker {
  return (id, recipient) => `${publicUrl}/answer/${answerToken(key, id, recipient)}`;
}
