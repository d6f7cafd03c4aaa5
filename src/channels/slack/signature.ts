/**
 * Slack's request signing (v0): HMAC-SHA256 under the app's signing secret over
 * `v0:<X-Slack-Request-Timestamp>:<raw body>`, sent as `X-Slack-Signature: v0=<hex>`. Checked
 * on the raw bytes before anything of the body is parsed; a timestamp more than five minutes
 * off is refused, so a captured request cannot be replayed later.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's own bound on a request's age (and on clock skew the other way). */
export const MAX_SKEW_S = 5 * 60;

type Headers = Readonly<Record<string, string | string[] | undefined>>;

const single = (v: string | string[] | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

export function slackSignature(secret: string, timestamp: string, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

/** Why the request is not Slack's under `secret` at `nowMs`, or undefined when it is. */
export function slackSignatureProblem(secret: string, headers: Headers, body: string, nowMs: number): string | undefined {
  const timestamp = single(headers['x-slack-request-timestamp']);
  const signature = single(headers['x-slack-signature']);
  if (!timestamp || !signature) return 'no X-Slack-Signature or X-Slack-Request-Timestamp';
  if (!/^\d{1,12}$/.test(timestamp)) return 'the timestamp is not a number of seconds';
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > MAX_SKEW_S)
    return 'the timestamp is more than 5 minutes from now (a replay, or a clock off)';
  const expected = Buffer.from(slackSignature(secret, timestamp, body));
  const given = Buffer.from(signature);
  // timingSafeEqual needs equal lengths; a length differs only for a malformed signature.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'the signature does not verify';
  return undefined;
}
