/**
 * SMS through Twilio's official client (`client.messages.create`). The client is given our
 * own `RequestClient` subclass, which (1) rewrites the origin of each request when `apiUrl`
 * points at a loopback test peer, (2) keeps the response headers of the current call, which
 * the client's exceptions drop, so that Retry-After survives, and (3) gives each request the
 * send's budget signal (axios aborts it) and watches its socket, so that an abort before the
 * request was written is known to have sent nothing. Auth, form encoding and headers stay
 * the client's own. Its agent's socket limit is lifted: Slots are the only queue.
 */
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { AsyncLocalStorage } from 'node:async_hooks';
import http, { type ClientRequest, type RequestOptions } from 'node:http';
import https from 'node:https';
import type TwilioRequestClient from 'twilio/lib/base/RequestClient.js';
import type { Logger } from '../../core/log.js';
import {
  DeliveryUnknownError,
  failedAt,
  ProviderError,
  ProviderRejectedError,
  ProviderTransientError,
  RecipientOptedOutError,
} from '../../providers/errors.js';
import { networkFailure, rootNetworkCode } from '../../providers/network-failure.js';
import { headerValue, parseRetryAfterMs } from '../../providers/retry-after.js';
import { DEFAULT_PROVIDER_CONCURRENCY, Slots } from '../../providers/slots.js';
import type { Provider, ProviderReceipt } from '../../providers/types.js';

/** The form fields of Twilio's `POST /Accounts/{sid}/Messages.json`. */
export interface SmsPayload {
  To: string;
  Body: string;
  From?: string;
  MessagingServiceSid?: string;
  /** Where Twilio posts the message's status changes (NOTIFY_PUBLIC_URL set). */
  StatusCallback?: string;
  /** MMS media Twilio fetches and attaches (one MediaUrl form field each). */
  MediaUrl?: string[];
}

export interface TwilioProviderOptions {
  accountSid: string;
  authToken: string;
  /** Test override: a loopback origin that replaces `https://api.twilio.com`. */
  apiUrl?: string;
  /** Per-request timeout (replaces the client's default). */
  timeoutMs: number;
  /** Requests in flight at once; more wait in order (default DEFAULT_PROVIDER_CONCURRENCY). */
  maxConcurrent?: number;
  log: Logger;
}

/** Per-call state, carried to the RequestClient through the async context. */
interface CallState {
  signal: AbortSignal;
  /** The client issued the HTTP request. */
  requested: boolean;
  /** Our transport created it, so `written` can be trusted. */
  tracked: boolean;
  /** The whole request (headers and body) was handed to its socket: from then on it may reach Twilio. */
  written: boolean;
  headers?: unknown;
}

/** What classifyTwilioError needs to know of the call. */
export interface TwilioCallFacts {
  /** The client issued the HTTP request (false: it refused before, or the budget was spent). */
  requested: boolean;
  /** The request may have reached Twilio; defaults to `requested`. */
  mayHaveReached?: boolean;
  /** The send's budget ended the call. */
  aborted?: boolean;
  headers?: unknown;
}

/** Model-facing explanations of the Twilio errors a caller can act on. */
const TWILIO_HINTS: Record<number, string> = {
  21211: "'to' is not a valid phone number; send an E.164 number such as +14155550100",
  21614: "'to' is not a mobile number that can receive SMS; use a mobile number or another channel",
  21612: "Twilio cannot route a message from this sender to 'to'; use another number or channel",
  21408: "this account may not send SMS to the region of 'to'; use another number or channel",
  21610: 'the recipient replied STOP to this sender and has opted out of its messages',
  21602: 'the message body is empty; send some text',
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
 * Maps what `messages.create` threw to a provider error. Once the request may have reached
 * Twilio, a timeout, reset or abort may have left the message with Twilio.
 */
export function classifyTwilioError(err: unknown, call: TwilioCallFacts): ProviderError {
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
  const netCode = rootNetworkCode(err);
  if (!call.requested && !netCode && !call.aborted) {
    // The client refused the parameters before any request (e.g. a missing 'to').
    return new ProviderRejectedError('twilio', `the Twilio client refused the message: ${e.message ?? String(err)}`, undefined, err);
  }
  return networkFailure('twilio', 'Twilio', err, {
    reached: call.mayHaveReached ?? call.requested,
    aborted: call.aborted === true,
    code: netCode,
  });
}

/**
 * An axios transport (Node's http/https `request`) that records when the whole request has
 * gone to a connected socket: the request finished ('finish', all of it handed to the
 * socket) and the socket connected (a TLS one with its handshake done; before that a TLS
 * socket only buffers). A connection refused or reset, a TLS handshake failed, or a socket
 * closed before that, and Twilio cannot have the message.
 */
function watchedTransport(state: CallState) {
  return {
    request(options: RequestOptions, onResponse?: (res: http.IncomingMessage) => void): ClientRequest {
      const req = (options.protocol === 'https:' ? https : http).request(options, onResponse);
      state.tracked = true;
      let connected = false;
      let finished = false;
      const update = () => {
        state.written = connected && finished;
      };
      req.once('finish', () => {
        finished = true;
        update();
      });
      req.once('socket', (socket: Socket) => {
        const ready = () => {
          connected = true;
          update();
        };
        if (!socket.connecting) ready();
        else socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', ready);
      });
      return req;
    },
  };
}

export async function createTwilioProvider(opts: TwilioProviderOptions): Promise<Provider<SmsPayload>> {
  const twilio = (await import('twilio')).default;
  const calls = new AsyncLocalStorage<CallState>();
  const slots = new Slots('twilio', opts.maxConcurrent ?? DEFAULT_PROVIDER_CONCURRENCY);
  const client = twilioClient(twilio, opts, calls);
  const log = opts.log.child({ provider: 'twilio' });
  return {
    name: 'twilio',
    callsStarting: true,
    async send(payload: SmsPayload, ctx): Promise<ProviderReceipt> {
      const state: CallState = { signal: ctx.signal, requested: false, tracked: false, written: false };
      // The sender this attempt used; through a messaging service, the service (Twilio picks the number).
      const sender = payload.From ?? payload.MessagingServiceSid;
      const endpoint = sender === undefined ? undefined : { name: sender };
      try {
        const message = await slots.run(ctx, () =>
          calls.run(state, () =>
            client.messages.create({
              to: payload.To,
              body: payload.Body,
              ...(payload.MessagingServiceSid ? { messagingServiceSid: payload.MessagingServiceSid } : {}),
              ...(payload.From ? { from: payload.From } : {}),
              ...(payload.StatusCallback ? { statusCallback: payload.StatusCallback } : {}),
              ...(payload.MediaUrl ? { mediaUrl: payload.MediaUrl } : {}),
            }),
          ),
        );
        return endpoint
          ? { providerMessageId: message.sid, providerStatus: message.status, endpoint }
          : { providerMessageId: message.sid, providerStatus: message.status };
      } catch (err) {
        const mapped = classifyTwilioError(err, {
          requested: state.requested,
          // Without our transport's word, a request that was issued may have been written.
          mayHaveReached: state.requested && (!state.tracked || state.written),
          aborted: ctx.signal.aborted,
          headers: state.headers,
        });
        log.debug('twilio send failed', { notificationId: ctx.notificationId, kind: mapped.name, code: mapped.vendorCode });
        throw endpoint ? failedAt(mapped, endpoint) : mapped;
      }
    },
  };
}

type Twilio = typeof import('twilio');

/** The Twilio client on our RequestClient (see the top of this file), with its own retries off. */
function twilioClient(twilio: Twilio, opts: TwilioProviderOptions, calls: AsyncLocalStorage<CallState>): ReturnType<Twilio> {
  const origin = opts.apiUrl ? new URL(opts.apiUrl).origin : undefined;

  class NotifyRequestClient extends twilio.RequestClient {
    constructor(options: TwilioRequestClient.RequestClientOptions) {
      super(options);
      // Synchronous, so it runs in the caller's async context, where the call's state is.
      this.axios.interceptors.request.use(
        (config) => {
          const state = calls.getStore();
          if (state) {
            config.signal = state.signal;
            config.transport = watchedTransport(state);
          }
          return config;
        },
        undefined,
        { synchronous: true },
      );
    }

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
      const res = await pending;
      if (state) state.headers = res.headers;
      return res;
    }
  }

  return twilio(opts.accountSid, opts.authToken, {
    httpClient: new NotifyRequestClient({
      timeout: opts.timeoutMs,
      keepAlive: true,
      autoRetry: false,
      // The agent would queue requests past its socket limit, a second queue the budget's
      // floor (MIN_SEND_WINDOW_MS) cannot see; Slots bound them instead.
      maxSockets: Infinity,
      maxTotalSockets: Infinity,
    }),
    logLevel: 'none',
  });
}
