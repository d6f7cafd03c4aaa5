/**
 * POST /webhooks/<path>: provider receipts (Twilio status callbacks), for every channel
 * module that declares `receipts`. No bearer token: the provider's signature is the
 * authentication, checked by the channel with the vendor's own helper. Unsigned or
 * mis-signed is 403 and changes nothing; a verified receipt is applied through
 * src/notification/status-receipt.ts (or held there until its send is recorded) and
 * answered 200 whatever it changed, so the provider does not resend it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConfiguredChannel } from '../../channels/channel.js';
import type { Logger } from '../../core/log.js';
import { findUnstorableText, unstorableIn } from '../../core/storable-text.js';
import { describeValue } from '@notify-mcp/union';
import { applyReceipt, type ReceiptDeps } from '../../notification/status-receipt.js';
import { sendJson } from './banner-feed.js';
import { BodyTooLargeError, readBody } from '../body.js';

/** Status callbacks are a few hundred bytes of form fields. */
export const MAX_WEBHOOK_BYTES = 64 * 1024;

export const WEBHOOK_ROUTE = /^\/webhooks\/([^/]+)$/;

const fail = (res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  sendJson(res, status, { error: { code, message } }, headers);

export async function serveWebhook(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  name: string,
  deps: ReceiptDeps & { channels: readonly ConfiguredChannel[]; log: Logger },
): Promise<void> {
  const channel = deps.channels.find((c) => c.receipts?.path === name);
  if (!channel?.receipts) return fail(res, 404, 'NOT_FOUND', `No webhook ${url.pathname}`);
  if (req.method !== 'POST') return fail(res, 405, 'METHOD_NOT_ALLOWED', `${url.pathname} takes POST only`, { Allow: 'POST' });
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    return fail(
      res,
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      'Send the callback form-encoded (application/x-www-form-urlencoded), as the provider does.',
    );
  }
  let body: string;
  try {
    body = (await readBody(req, MAX_WEBHOOK_BYTES)).toString('utf8');
  } catch (err) {
    if (err instanceof BodyTooLargeError) {
      return fail(res, 413, 'TOO_LARGE', `Callback body over ${MAX_WEBHOOK_BYTES} bytes`, { Connection: 'close' });
    }
    throw err;
  }
  const log = deps.log.child({ hook: name, via: channel.name });
  // Before the signature: such a callback is refused whoever signed it, and nothing of it is read further.
  const field = unstorableField(new URLSearchParams(body));
  if (field) return refuseUnstorable(res, log, field);
  const reading = await channel.receipts.read({ search: url.search, headers: req.headers, body });
  // What the channel decoded from the fields (JSON escapes in a field can make a lone surrogate).
  const decoded = reading.verified && reading.report ? findUnstorableText(reading.report) : undefined;
  if (decoded) return refuseUnstorable(res, log, `What the callback reports (${decoded.path}) holds ${decoded.what}`);
  if (!reading.verified) {
    log.warn('webhook refused: signature missing or invalid');
    return fail(
      res,
      403,
      'FORBIDDEN',
      "The callback signature is missing or does not verify against this server's credentials and NOTIFY_PUBLIC_URL; nothing was changed.",
    );
  }
  const outcome = reading.report ? await applyReceipt({ ...deps, log }, channel.name, reading.report) : 'ignored';
  sendJson(res, 200, { ok: true, outcome }, { 'Cache-Control': 'no-store' });
}

/** The first form field whose name or value a store cannot keep, said in words; undefined when none. */
function unstorableField(fields: URLSearchParams): string | undefined {
  for (const [name, value] of fields) {
    const inName = unstorableIn(name);
    if (inName) return `The name of a callback field holds ${inName}`;
    const inValue = unstorableIn(value);
    if (inValue) return `The callback field ${describeValue(name)} holds ${inValue}`;
  }
  return undefined;
}

function refuseUnstorable(res: ServerResponse, log: Logger, problem: string): void {
  log.warn('webhook refused: text this server cannot store', { problem });
  fail(res, 400, 'INVALID_FIELD', `${problem}, which this server cannot store; nothing was changed.`);
}
