/**
 * A channel's inbound path (POST /slack/interactions, POST /webhooks/twilio/inbound): what
 * people send back. No bearer token: the vendor's signature is the authentication, checked
 * by the channel on the raw body before anything in it is parsed (src/channels/inbound.ts).
 * Unsigned, mis-signed or stale is 403 and changes nothing; a verified request is answered
 * 200 whatever it changed (a vendor resends anything else), with the body the vendor expects.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConfiguredChannel } from '../../channels/channel.js';
import type { InboundPath } from '../../channels/inbound.js';
import type { Logger } from '../../core/log.js';
import { takeReply, type ReplyDeps } from '../../notification/replies.js';
import { sendJson } from './banner-feed.js';
import { BodyTooLargeError, readBody } from '../body.js';

/** A Slack interaction carries the whole message's blocks (up to 50 of 3,000 characters); an SMS reply a few hundred bytes. */
export const MAX_INBOUND_BYTES = 512 * 1024;

const fail = (res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  sendJson(res, status, { error: { code, message } }, headers);

export async function serveInbound(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  channel: ConfiguredChannel & { inbound: InboundPath },
  deps: ReplyDeps,
): Promise<void> {
  if (req.method !== 'POST') return fail(res, 405, 'METHOD_NOT_ALLOWED', `${url.pathname} takes POST only`, { Allow: 'POST' });
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    return fail(res, 415, 'UNSUPPORTED_MEDIA_TYPE', 'Send it form-encoded (application/x-www-form-urlencoded), as the vendor does.');
  let body: string;
  try {
    body = (await readBody(req, MAX_INBOUND_BYTES)).toString('utf8');
  } catch (err) {
    if (err instanceof BodyTooLargeError)
      return fail(res, 413, 'TOO_LARGE', `Body over ${MAX_INBOUND_BYTES} bytes`, { Connection: 'close' });
    throw err;
  }
  const log = deps.log.child({ hook: url.pathname, via: channel.name });
  const reading = await channel.inbound.read({ search: url.search, headers: req.headers, body }, deps.now());
  if (!reading.verified) {
    log.warn('reply refused: not verified', { why: reading.why });
    return fail(res, 403, 'FORBIDDEN', `The request's signature does not verify (${reading.why}); nothing was changed.`);
  }
  if (reading.reply) await takeReply({ ...deps, log }, channel.name, reading.reply);
  else log.info('reply changed nothing', { why: reading.why ?? 'nothing to act on' });
  const ack = reading.ack ?? { contentType: 'text/plain; charset=utf-8', body: '' };
  res.writeHead(200, {
    'Content-Type': ack.contentType,
    'Content-Length': String(Buffer.byteLength(ack.body)),
    'Cache-Control': 'no-store',
  });
  res.end(ack.body);
}
