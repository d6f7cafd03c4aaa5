import { randomUUID } from 'node:crypto';

/**
 * `ntf_` and 32 hex digits: the time in ms (12), then 80 random bits. Time first, so that
 * a new id lands at the end of the deliveries' id index, on the same page as the last one:
 * random ids write a page anywhere in it, which makes each record dearer as the table grows.
 */
export function newNotificationId(): string {
  const u = randomUUID();
  // A v4 UUID's first 8 and last 12 digits are random; the 12 between carry its version and variant.
  return `ntf_${Date.now().toString(16).padStart(12, '0')}${u.slice(0, 8)}${u.slice(24)}`;
}

/** `bnr_` and a random UUID. */
export function newBannerId(): string {
  return `bnr_${randomUUID()}`;
}
