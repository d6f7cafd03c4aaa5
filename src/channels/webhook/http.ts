/**
 * The webhook provider: one POST per attempt with node:http(s), following no redirect, its
 * sockets connected only to addresses guardedLookup allowed (./address.ts), bounded by the
 * request timeout and the send's budget. A 2xx is sent; 410 is permanent; 408, 429 and 5xx
 * are transient (Retry-After honoured by src/providers/retry.ts); a failure before the
 * request was written sent nothing, one after it may have delivered it (DELIVERY_UNKNOWN).
 * A target's fallback is tried only when the target clearly did not accept.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Logger } from '../../core/log.js';
import { DeliveryUnknownError, failedAt, ProviderError, ProviderRejectedError, ProviderTransientError } from '../../providers/errors.js';
import { networkFailure, rootNetworkCode } from '../../providers/network-failure.js';
import { headerValue, parseRetryAfterMs } from '../../providers/retry-after.js';
import { DEFAULT_PROVIDER_CONCURRENCY, Slots } from '../../providers/slots.js';
import type { Endpoint, Provider, ProviderReceipt, SendContext } from '../../providers/types.js';
import { digestOf } from '../../store/audit.js';
import { blockedAddress, BlockedAddressError, guardedLookup, systemResolve, type Resolve } from './address.js';
import { standardSignature } from './sign.js';
import { bareHost, type WebhookFormat, type WebhookTarget } from './targets.js';

/** One request as built and recorded: the URL's origin only, secrets redacted; the provider fills them in per attempt. */
export interface WebhookRequest {
  target: string;
  format: WebhookFormat;
  method: 'POST';
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The target's fallback's request, tried only when this one clearly did not accept. */
  fallback?: WebhookRequest;
}

export interface WebhookProviderOptions {
  targets: readonly WebhookTarget[];
  /** Hosts that may resolve to private addresses (NOTIFY_WEBHOOK_PRIVATE_HOSTS). */
  privateHosts: readonly string[];
  timeoutMs: number;
  maxConcurrent?: number;
  log: Logger;
  /** The DNS lookup (tests give their own answers); the system's by default. */
  resolve?: Resolve;
  now?: () => number;
}

/** How much of a refusal's body is read, for its message. */
const MAX_ERROR_BODY = 1024;

/** The headers that go out on this attempt: a fresh timestamp and signature, the secret in place of its redaction. */
function liveHeaders(target: WebhookTarget, request: WebhookRequest, nowMs: number, id: string): Record<string, string> {
  const headers: Record<string, string> = { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) };
  if (target.format === 'standard' && target.secret) {
    const timestamp = String(Math.floor(nowMs / 1000));
    headers['webhook-id'] = id;
    headers['webhook-timestamp'] = timestamp;
    headers['webhook-signature'] = standardSignature(target.secret, id, timestamp, request.body);
  }
  if (target.format === 'ntfy' && target.secret) headers.Authorization = `Bearer ${target.secret}`;
  return headers;
}

/** What an answered status means. */
function statusError(target: string, status: number, headers: http.IncomingHttpHeaders, excerpt: string): ProviderError {
  const said = excerpt ? `: ${JSON.stringify(excerpt.slice(0, 200))}` : '';
  if (status === 408 || status === 429 || status >= 500) {
    return new ProviderTransientError('webhook', `target ${target} answered HTTP ${status}${said}`, {
      rateLimited: status === 429,
      retryAfterMs: parseRetryAfterMs(headerValue(headers, 'retry-after')),
      vendorCode: status,
    });
  }
  if (status >= 300 && status < 400) {
    const to = headerValue(headers, 'location');
    const where = typeof to === 'string' ? ` to ${JSON.stringify(to.slice(0, 200))}` : '';
    return new ProviderRejectedError(
      'webhook',
      `target ${target} answered HTTP ${status}, a redirect${where}; redirects are not followed, so nothing more was sent: the operator must set the target's final URL`,
      status,
    );
  }
  if (status === 410) {
    return new ProviderRejectedError(
      'webhook',
      `target ${target} is gone (HTTP 410): the operator must replace its URL in NOTIFY_WEBHOOKS`,
      status,
    );
  }
  return new ProviderRejectedError('webhook', `target ${target} refused the request (HTTP ${status})${said}`, status);
}

function requestFailure(target: string, err: unknown, written: boolean, aborted: boolean): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof BlockedAddressError) {
    return new ProviderRejectedError(
      'webhook',
      `target ${target}: ${err.message}, which webhooks may not reach; nothing was sent (the operator may list ${err.host} on NOTIFY_WEBHOOK_PRIVATE_HOSTS)`,
      'blocked_address',
      err,
    );
  }
  return networkFailure('webhook', `target ${target}`, err, { reached: written, aborted, code: rootNetworkCode(err) });
}

interface Agents {
  'http:': http.Agent;
  'https:': https.Agent;
}

/** One POST of `request` to `target`: its receipt, or the provider error that says how far it got. */
function post(target: WebhookTarget, request: WebhookRequest, ctx: SendContext, agents: Agents, opts: WebhookProviderOptions) {
  const url = new URL(target.url);
  const host = bareHost(url);
  const mayBePrivate = opts.privateHosts.includes(host);
  const kind = isIP(host) && !mayBePrivate ? blockedAddress(host) : undefined;
  if (kind) return Promise.reject(requestFailure(target.name, new BlockedAddressError(host, host, kind), false, false));
  const headers = liveHeaders(target, request, (opts.now ?? Date.now)(), ctx.notificationId);
  return new Promise<ProviderReceipt>((resolve, reject) => {
    let written = false;
    const agent = agents[url.protocol as keyof Agents];
    const req = (url.protocol === 'https:' ? https : http).request(url, { method: 'POST', headers, agent });
    const timer = setTimeout(
      () => req.destroy(Object.assign(new Error(`no answer within ${opts.timeoutMs} ms`), { name: 'TimeoutError' })),
      opts.timeoutMs,
    );
    const onAbort = () => req.destroy(ctx.signal.reason as Error);
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      outcome();
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) => settle(() => reject(requestFailure(target.name, err, written, ctx.signal.aborted))));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        res.resume();
        return settle(() => resolve({ providerStatus: String(status) }));
      }
      let excerpt = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (excerpt.length < MAX_ERROR_BODY) excerpt += chunk.slice(0, MAX_ERROR_BODY - excerpt.length);
      });
      const done = () => settle(() => reject(statusError(target.name, status, res.headers, excerpt.trim())));
      res.on('end', done);
      res.on('error', done);
    });
    req.end(request.body, () => {
      written = true;
    });
  });
}

/** Whether the target clearly did not take the message, so that its fallback may: it answered a refusal, or never got the request. */
function notAccepted(err: ProviderError): boolean {
  if (err instanceof DeliveryUnknownError) return false;
  return err instanceof ProviderRejectedError || err instanceof ProviderTransientError;
}

/**
 * A target as its attempt names it. Its digest is of its own request as recorded (secrets
 * redacted, without the fallback's), unless that request is the whole recorded payload.
 */
function endpointOf(request: WebhookRequest, root: WebhookRequest): Endpoint {
  if (request === root && !request.fallback) return { name: request.target };
  const { fallback: _fallback, ...own } = request;
  return { name: request.target, digest: digestOf(own) };
}

export function createWebhookProvider(opts: WebhookProviderOptions): Provider<WebhookRequest> {
  const log = opts.log.child({ provider: 'webhook' });
  const slots = new Slots('webhook', opts.maxConcurrent ?? DEFAULT_PROVIDER_CONCURRENCY);
  const lookup = guardedLookup(opts.resolve ?? systemResolve, (host) => opts.privateHosts.includes(host));
  const agents: Agents = {
    'http:': new http.Agent({ keepAlive: true, lookup }),
    'https:': new https.Agent({ keepAlive: true, lookup }),
  };
  const byName = new Map(opts.targets.map((t) => [t.name, t]));

  const sendChain = async (request: WebhookRequest, ctx: SendContext, root: WebhookRequest): Promise<ProviderReceipt> => {
    const endpoint = endpointOf(request, root);
    const target = byName.get(request.target);
    if (!target) {
      const gone = new ProviderRejectedError('webhook', `target ${request.target} is no longer configured (NOTIFY_WEBHOOKS)`);
      throw failedAt(gone, endpoint);
    }
    try {
      return { ...(await post(target, request, ctx, agents, opts)), endpoint };
    } catch (err) {
      const failure = err instanceof ProviderError ? failedAt(err, endpoint) : (err as ProviderError);
      if (!request.fallback || !notAccepted(failure) || ctx.signal.aborted) throw failure;
      // An attempt of its own in the log, naming this target.
      ctx.failedOver?.(failure);
      log.info('webhook fallback', { target: request.target, fallback: request.fallback.target, reason: failure.vendorCode });
      return sendChain(request.fallback, ctx, root);
    }
  };

  return {
    name: 'webhook',
    callsStarting: true,
    send: (payload, ctx) => slots.run(ctx, () => sendChain(payload, ctx, payload)),
    async close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
