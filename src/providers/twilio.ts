/**
 * SMS through Twilio's official client (`client.messages.create`). The client is given our
 * own `RequestClient` subclass, which (1) rewrites the origin of each request when `apiUrl`
 * points at a loopback test peer, (2) keeps the response headers of the current call, which
 * the client's exceptions drop, so that Retry-After survives, and (3) ends the wait when the
 * send's budget runs out. Auth, form encoding and headers stay the client's own.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type TwilioRequestClient from 'twilio/lib/base/RequestClient.js';
import type { Logger } from '../log.js';
import { DeliveryUnknownError, ProviderError, ProviderRejectedError, ProviderTransientError, RecipientOptedOutError } from './errors.js';
import { untilAborted } from './abort.js';
import { headerValue, parseRetryAfterMs } from './retry-after.js';
import type { Provider, ProviderReceipt, SmsPayload } from './types.js';

export interface TwilioProviderOptions {
  accountSid: string;
  authToken: string;
  /** Test override: a loopback origin that replaces `https://api.twilio.com`. */
  apiUrl?: string;
  /** Per-request timeout (the client's default is 30 s). */
  timeoutMs: number;
  log: Logger;
}

/** Per-call state, carried to the RequestClient through the async context. */
interface CallState {
  signal: AbortSignal;
  requested: boolean;
  headers?: unknown;
}

/** Errors raised before a byte could reach Twilio: safe to retry. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_INVALID_URL']);

/** Model-facing explanations of the Twilio errors a caller can act on. */
const TWILIO_HINTS: Record<number, string> = {
  21211: "'to' is not a valid phone number; send an E.164 number such as +14155550100",
  21614: "'to' is not a mobile number that can receive SMS; use a mobile number or another channel",
  21612: "Twilio cannot route a message from this sender to 'to'; use another number or channel",
  21408: "this account may not send SMS to the region of 'to'; use another number or channel",
  21610: "the recipient replied STOP to this sender and has opted out of its messages",
  21602: "the message body is empty; send some text",
  21617: 'the body is too long for Twilio (1600 characters at most); shorten it',
};

interface TwilioErrorShape {
  status?: number;
  code?: number | string;
  message?: string;
  detail?: string;
  title?: string;
  name?: string;
  cause?: unknown;
}

/**
 * Maps what `messages.create` threw to a provider error. `requested`: the HTTP request was
 * issued, so a timeout or reset may have left the message with Twilio.
 */
export function classifyTwilioError(err: unknown, call: { requested: boolean; headers?: unknown }): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = (err ?? {}) as TwilioErrorShape;
  if (typeof e.status === 'number') {
    const status = e.status;
    const code = typeof e.code === 'number' ? e.code : Number(e.code) || undefined;
    const vendorCode = code ?? status;
    const detail = e.detail ?? (typeof e.message === 'string' && e.message ? e.message : e.title) ?? `HTTP ${status}`;
    if (code === 21610) return new RecipientOptedOutError('twilio', `Twilio error 21610: ${TWILIO_HINTS[21610]}.`, 21610, err);
    if (status === 429 || status >= 500) {
      return new ProviderTransientError('twilio', `Twilio answered HTTP ${status}${code ? ` (error ${code})` : ''}`, {
        retryAfterMs: parseRetryAfterMs(headerValue(call.headers, 'retry-after')),
        rateLimited: status === 429,
        vendorCode,
        cause: err,
      });
    }
    if (status === 401 || status === 403) {
      return new ProviderRejectedError(
        'twilio',
        `Twilio refused the credentials (HTTP ${status}); the operator must fix TWILIO_ACCOUNT_SID / TWILIO_AUTH_TOKEN, resending will not help`,
        vendorCode,
        err,
      );
    }
    const hint = code !== undefined ? TWILIO_HINTS[code] : undefined;
    return new ProviderRejectedError(
      'twilio',
      hint ? `Twilio error ${code}: ${hint}.` : `Twilio refused the message (HTTP ${status}${code ? `, error ${code}` : ''}: ${detail}).`,
      vendorCode,
      err,
    );
  }
  const netCode = networkCode(err);
  if (!call.requested || (netCode && NOT_SENT_CODES.has(netCode))) {
    if (!call.requested && !netCode) {
      // The client refused the parameters before any request (e.g. a missing 'to').
      return new ProviderRejectedError('twilio', `the Twilio client refused the message: ${e.message ?? String(err)}`, undefined, err);
    }
    return new ProviderTransientError('twilio', `could not reach Twilio (${netCode ?? 'error'})`, { vendorCode: netCode, cause: err });
  }
  return new DeliveryUnknownError(
    'twilio',
    `no answer from Twilio after the request was sent (${netCode ?? e.name ?? 'error'})`,
    netCode ?? e.name,
    err,
  );
}

function networkCode(err: unknown): string | undefined {
  let cur: unknown = err;
  for (let i = 0; i < 4 && cur && typeof cur === 'object'; i++) {
    const c = (cur as { code?: unknown }).code;
    if (typeof c === 'string') return c;
    const name = (cur as { name?: unknown }).name;
    if (name === 'BudgetExceededError' || name === 'AbortError' || name === 'TimeoutError') return String(name);
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}


export async function createTwilioProvider(opts: TwilioProviderOptions): Promise<Provider<SmsPayload>> {
  const twilio = (await import('twilio')).default;
  const calls = new AsyncLocalStorage<CallState>();
  const origin = opts.apiUrl ? new URL(opts.apiUrl).origin : undefined;

  class NotifyRequestClient extends twilio.RequestClient {
    override async request<T>(req: TwilioRequestClient.RequestOptions<T>) {
      const state = calls.getStore();
      let uri = req.uri;
      if (origin) {
        const u = new URL(req.uri);
        uri = origin + u.pathname + u.search;
      }
      // logLevel 'debug' would make the client console.log to stdout, which is JSON-RPC's.
      const pending = super.request<T>({ ...req, uri, logLevel: 'none' });
      if (state) state.requested = true;
      const res = state ? await untilAborted(pending, state.signal) : await pending;
      if (state) state.headers = res.headers;
      return res;
    }
  }

  const client = twilio(opts.accountSid, opts.authToken, {
    httpClient: new NotifyRequestClient({ timeout: opts.timeoutMs, keepAlive: true, autoRetry: false }),
    logLevel: 'none',
  });
  const log = opts.log.child({ provider: 'twilio' });

  return {
    name: 'twilio',
    async send(payload: SmsPayload, ctx): Promise<ProviderReceipt> {
      const state: CallState = { signal: ctx.signal, requested: false };
      try {
        const message = await calls.run(state, () =>
          client.messages.create({
            to: payload.To,
            body: payload.Body,
            ...(payload.MessagingServiceSid ? { messagingServiceSid: payload.MessagingServiceSid } : {}),
            ...(payload.From ? { from: payload.From } : {}),
          }),
        );
        return { providerMessageId: message.sid };
      } catch (err) {
        const mapped = classifyTwilioError(err, state);
        log.debug('twilio send failed', { notificationId: ctx.notificationId, kind: mapped.name, code: mapped.vendorCode });
        throw mapped;
      }
    },
  };
}
