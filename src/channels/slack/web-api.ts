/**
 * Slack through `@slack/web-api` (`chat.postMessage`), with the client's own retries and queue
 * out of the way so that sendWithRetry and this adapter's Slots own every wait, and the send's
 * budget carried into its `fetch` (createSlackProvider).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import diagnostics from 'node:diagnostics_channel';
import type { WebClient } from '@slack/web-api';
import type { Logger } from '../../core/log.js';
import { DeliveryUnknownError, ProviderError, ProviderRejectedError, ProviderTransientError } from '../../providers/errors.js';
import { networkFailure, rootNetworkCode } from '../../providers/network-failure.js';
import { headerValue, parseRetryAfterMs } from '../../providers/retry-after.js';
import { DEFAULT_PROVIDER_CONCURRENCY, Slots } from '../../providers/slots.js';
import type { Posted, Provider, ProviderReceipt, SendContext } from '../../providers/types.js';

/** The arguments of Slack's `chat.postMessage`. */
export interface SlackPayload {
  channel: string;
  text: string;
  thread_ts?: string;
  /** Block Kit layout; `text` stays the notification's text and the fallback. */
  blocks?: unknown[];
}

export interface SlackProviderOptions {
  token: string;
  /** Test override: a loopback origin that replaces `https://slack.com/api/`. */
  apiUrl?: string;
  /** Per-request timeout. */
  timeoutMs: number;
  /** Requests in flight at once; more wait in order (default DEFAULT_PROVIDER_CONCURRENCY). */
  maxConcurrent?: number;
  log: Logger;
}

/** Per-call state, carried to the client's fetch through the async context. */
interface CallState {
  signal: AbortSignal;
  /** The request was handed to fetch. */
  requested: boolean;
  /** fetch created the request in this call (so `written` can be trusted). */
  tracked?: boolean;
  /** Its whole body went to the socket: from then on it may reach Slack. */
  written?: boolean;
}

/**
 * Node's fetch (undici) says on diagnostics channels when it creates a request, in the
 * caller's async context, and when the request's whole body has gone to the socket. A
 * failure before that (connection refused or reset, TLS handshake, a socket closed before
 * the request was written) cannot have posted anything.
 */
const calls = new AsyncLocalStorage<CallState>();
const requestCalls = new WeakMap<object, CallState>();
let watching = false;
function watchRequests(): void {
  if (watching) return;
  watching = true;
  diagnostics.subscribe('undici:request:create', (message) => {
    const state = calls.getStore();
    const request = (message as { request?: object }).request;
    if (!state || !request) return;
    state.tracked = true;
    requestCalls.set(request, state);
  });
  diagnostics.subscribe('undici:request:bodySent', (message) => {
    const request = (message as { request?: object }).request;
    const state = request && requestCalls.get(request);
    if (state) state.written = true;
  });
}

/** Model-facing explanations of Slack's `ok: false` errors; the channel is filled in. */
const REJECTIONS: Record<string, (channel: string) => string> = {
  channel_not_found: (c) =>
    `channel ${c} was not found, or the bot cannot see it (private channels need the bot invited); check the channel ID or #name`,
  not_in_channel: (c) => `the bot is not a member of ${c}; invite it with /invite @<bot name> in that channel, then send again`,
  is_archived: (c) => `channel ${c} is archived; pick another channel`,
  channel_is_archived: (c) => `channel ${c} is archived; pick another channel`,
  msg_too_long: () => 'the text is too long for Slack; shorten it',
  no_text: () => 'the message has no text; send some text',
  thread_not_found: () => 'the thread was not found; drop thread or use the ts of an existing parent message',
  invalid_thread_ts: () => 'thread is not a valid parent message ts; drop it or use one like 1712345678.123456',
  cannot_reply_to_message: () => 'that message cannot be replied to in a thread; drop thread',
  restricted_action: (c) => `the workspace does not let the bot post in ${c}; pick another channel`,
  restricted_action_read_only_channel: (c) => `${c} is read-only for the bot; pick another channel`,
  restricted_action_thread_only_channel: (c) => `${c} accepts thread replies only; set thread to a parent message ts`,
  restricted_action_non_threadable_channel: (c) => `${c} does not allow threads; drop thread`,
  ekm_access_denied: (c) => `the workspace's key management denies posting to ${c}`,
  duplicate_channel_not_found: (c) => `channel ${c} was not found`,
  message_not_found: (c) => `the message is no longer in ${c} (deleted there already?); nothing was changed`,
  cant_update_message: () => 'Slack does not let the bot change this message',
  cant_delete_message: () => 'Slack does not let the bot delete this message',
  edit_window_closed: () => "the workspace's time to edit this message has passed",
};

/** Credential and scope problems: for the operator, not the model. */
const CREDENTIAL_ERRORS = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'no_permission',
  'missing_scope',
  'not_allowed_token_type',
  'org_login_required',
  'team_access_not_granted',
  'access_denied',
]);

/** Slack could not take the call; nothing was posted. */
const TRANSIENT_ERRORS = new Set(['service_unavailable', 'request_timeout', 'team_added_to_org']);
/** Slack's docs: "it's possible some aspect of the operation succeeded". */
const UNKNOWN_ERRORS = new Set(['internal_error', 'fatal_error']);

interface SlackErrorShape {
  code?: string;
  name?: string;
  message?: string;
  data?: { error?: string; response_metadata?: { retryAfter?: number } };
  retryAfter?: number;
  statusCode?: number;
  headers?: Record<string, string>;
  body?: unknown;
  original?: unknown;
}

function bodyError(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    return typeof parsed.error === 'string' ? parsed.error : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Maps what the WebClient threw to a provider error. `reached` false: the request's body
 * never left, so a failure without an answer is transient.
 */
export function classifySlackError(err: unknown, channel: string, reached = true): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = (err ?? {}) as SlackErrorShape;
  switch (e.code) {
    case 'slack_webapi_platform_error': {
      const code = e.data?.error ?? 'unknown_error';
      if (code === 'ratelimited' || code === 'rate_limited') {
        const s = e.data?.response_metadata?.retryAfter;
        return new ProviderTransientError('slack', `Slack rate limited the call (${code})`, {
          rateLimited: true,
          retryAfterMs: typeof s === 'number' ? s * 1000 : undefined,
          vendorCode: code,
          cause: err,
        });
      }
      if (TRANSIENT_ERRORS.has(code)) {
        return new ProviderTransientError('slack', `Slack could not take the call (${code})`, { vendorCode: code, cause: err });
      }
      if (UNKNOWN_ERRORS.has(code)) {
        return new DeliveryUnknownError('slack', `Slack failed part-way (${code}) and may have posted the message`, code, err);
      }
      if (CREDENTIAL_ERRORS.has(code)) {
        return new ProviderRejectedError(
          'slack',
          `Slack refused the bot token (${code}); the operator must fix SLACK_BOT_TOKEN or its scopes (chat:write), resending will not help`,
          code,
          err,
        );
      }
      const hint = REJECTIONS[code];
      return new ProviderRejectedError('slack', hint ? `${hint(channel)} (${code}).` : `Slack refused the message (${code}).`, code, err);
    }
    case 'slack_webapi_rate_limited_error':
      return new ProviderTransientError('slack', 'Slack answered HTTP 429', {
        rateLimited: true,
        retryAfterMs: typeof e.retryAfter === 'number' ? e.retryAfter * 1000 : undefined,
        vendorCode: 429,
        cause: err,
      });
    case 'slack_webapi_http_error': {
      const status = e.statusCode ?? 0;
      if (status === 429 || status >= 500) {
        return new ProviderTransientError('slack', `Slack answered HTTP ${status}`, {
          rateLimited: status === 429,
          retryAfterMs: parseRetryAfterMs(headerValue(e.headers, 'retry-after')),
          vendorCode: status,
          cause: err,
        });
      }
      const code = bodyError(e.body);
      if (status === 401 || status === 403) {
        return new ProviderRejectedError(
          'slack',
          `Slack refused the bot token (HTTP ${status}); the operator must fix SLACK_BOT_TOKEN, resending will not help`,
          status,
          err,
        );
      }
      return new ProviderRejectedError(
        'slack',
        `Slack refused the request (HTTP ${status}${code ? `, ${code}` : ''}); check channel, text and thread`,
        status,
        err,
      );
    }
    default: {
      const net = rootNetworkCode(err, (code) => code.startsWith('slack_webapi_'));
      if (e.code === 'slack_webapi_request_error' || net) {
        return networkFailure('slack', 'Slack', err, { reached, aborted: false, code: net });
      }
      return new DeliveryUnknownError('slack', `unexpected Slack client error (${e.message ?? String(err)})`, undefined, err);
    }
  }
}

/**
 * The client's retries are off and rate-limited calls are rejected, so that sendWithRetry and
 * this adapter's Slots own every wait; its `fetch` carries the send's budget signal: an
 * in-flight post is aborted at the budget, and one the client would start after it is never sent.
 */
export async function createSlackProvider(opts: SlackProviderOptions): Promise<Provider<SlackPayload>> {
  const log = opts.log.child({ provider: 'slack' });
  const slots = new Slots('slack', opts.maxConcurrent ?? DEFAULT_PROVIDER_CONCURRENCY);
  watchRequests();
  const client = await slackClient(opts, log);
  const amend = (posted: Posted<SlackPayload>, ctx: SendContext, request: (channel: string) => Promise<unknown>) =>
    amendPost(client, slots, posted, ctx, request);
  return {
    name: 'slack',
    callsStarting: true,
    edit: (posted, next, ctx) =>
      amend(posted, ctx, (channel) =>
        client.chat.update({
          channel,
          ts: posted.providerMessageId,
          text: next.text,
          ...(next.blocks ? { blocks: next.blocks as never } : { blocks: [] }),
        }),
      ),
    retract: (posted, ctx) => amend(posted, ctx, (channel) => client.chat.delete({ channel, ts: posted.providerMessageId })),
    send: (payload, ctx) => post(client, slots, log, payload, ctx),
  };
}

/**
 * The client's own retries would wait far longer than any send's budget, and its console
 * logger would write to stdout, which is JSON-RPC's: both are replaced. Its p-queue runs
 * unbounded, so that this adapter's Slots are the only queue.
 */
async function slackClient(opts: SlackProviderOptions, log: Logger): Promise<WebClient> {
  const { WebClient, LogLevel } = await import('@slack/web-api');
  // Debug lines carry request bodies (message text): dropped. Warnings keep no arguments.
  const slackLogger = {
    debug: () => {},
    info: () => {},
    warn: (...msg: unknown[]) => log.warn('slack client warning', { detail: typeof msg[0] === 'string' ? msg[0] : undefined }),
    error: (...msg: unknown[]) => log.error('slack client error', { detail: typeof msg[0] === 'string' ? msg[0] : undefined }),
    setLevel: () => {},
    getLevel: () => LogLevel.WARN,
    setName: () => {},
  };
  return new WebClient(opts.token, {
    ...(opts.apiUrl ? { slackApiUrl: `${new URL(opts.apiUrl).origin}/` } : {}),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    // Unbounded, so that no request waits in the client's queue past its call's answer:
    // Slots bound the concurrency.
    maxRequestConcurrency: Infinity,
    fetch: fetchInBudget,
    timeout: opts.timeoutMs,
    logger: slackLogger,
  });
}

/** The client's timeout signal, joined with the send's budget; refuses once the budget is spent. */
function fetchInBudget(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const call = calls.getStore();
  if (!call) return fetch(input, init);
  if (call.signal.aborted) return Promise.reject(call.signal.reason);
  call.requested = true;
  return fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, call.signal]) : call.signal });
}

/** chat.postMessage, after opening a user's DM; a failure is mapped by how far the request got. */
async function post(client: WebClient, slots: Slots, log: Logger, payload: SlackPayload, ctx: SendContext): Promise<ProviderReceipt> {
  let state: CallState = { signal: ctx.signal, requested: false };
  // While the DM is being opened, nothing can have been posted, whatever the failure.
  let opening = false;
  try {
    const res = await slots.run(ctx, async () => {
      // A user ID names a person: their direct message is opened first (it exists once
      // opened, so opening again finds the same one). Until the post, nothing is posted.
      let channel = payload.channel;
      if (isUserId(channel)) {
        opening = true;
        channel = await calls.run(state, () => openDirectMessage(client, channel));
        opening = false;
        state = { signal: ctx.signal, requested: false };
      }
      return calls.run(state, () =>
        client.chat.postMessage({
          channel,
          text: payload.text,
          ...(payload.thread_ts ? { thread_ts: payload.thread_ts } : {}),
          ...(payload.blocks ? { blocks: payload.blocks as never } : {}),
        }),
      );
    });
    // The channel ID Slack answers is what chat.update and chat.delete take, whatever channel named (#name, a user).
    const conversation = typeof res.channel === 'string' && res.channel ? { conversation: res.channel } : {};
    return res.ts ? { providerMessageId: res.ts, providerStatus: 'ok', ...conversation } : { providerStatus: 'ok', ...conversation };
  } catch (err) {
    const mapped = state.requested
      ? classifySlackError(err, payload.channel, !opening && (!state.tracked || state.written === true))
      : notRequested(err, ctx.signal.aborted);
    log.debug('slack send failed', { notificationId: ctx.notificationId, kind: mapped.name, code: mapped.vendorCode });
    throw mapped;
  }
}

/** One chat.update or chat.delete within the call's budget; a failure is mapped as a post's is. */
async function amendPost(
  client: WebClient,
  slots: Slots,
  posted: Posted<SlackPayload>,
  ctx: SendContext,
  request: (channel: string) => Promise<unknown>,
): Promise<void> {
  const state: CallState = { signal: ctx.signal, requested: false };
  try {
    await slots.run(ctx, async () => calls.run(state, async () => request(await conversationOf(client, posted))));
  } catch (err) {
    throw state.requested ? classifySlackError(err, posted.payload.channel) : notRequested(err, ctx.signal.aborted);
  }
}

/**
 * The conversation a post went to, as chat.update and chat.delete need it: an ID. The one
 * chat.postMessage answered, as recorded; for a post recorded before that was kept, the ID
 * it named (a user's DM is opened again: it is the same one).
 */
async function conversationOf(client: WebClient, { payload, conversation }: Posted<SlackPayload>): Promise<string> {
  if (conversation) return conversation;
  if (isUserId(payload.channel)) return openDirectMessage(client, payload.channel);
  if (payload.channel.startsWith('#')) {
    throw new ProviderRejectedError(
      'slack',
      `this message was posted to ${payload.channel} by name before its channel ID was recorded, and Slack changes or deletes a message only by channel ID; send a new one`,
      undefined,
    );
  }
  return payload.channel;
}

/** A Slack user (U…, or W… in Enterprise Grid), whose DM a post opens first. */
export const isUserId = (channel: string): boolean => /^[UW][A-Z0-9]{2,}$/.test(channel);

/** conversations.open for one user: the DM's channel ID. Its failure posted nothing. */
async function openDirectMessage(
  client: { conversations: { open(a: { users: string }): Promise<{ channel?: { id?: string } }> } },
  user: string,
): Promise<string> {
  const res = await client.conversations.open({ users: user });
  const id = res.channel?.id;
  if (!id) throw new ProviderRejectedError('slack', `Slack opened no direct message with ${user}; check the user ID`, undefined);
  return id;
}

/** A failure before the request was handed to fetch: nothing reached Slack. */
function notRequested(err: unknown, aborted: boolean): ProviderError {
  if (err instanceof ProviderError) return err;
  if (aborted) return networkFailure('slack', 'Slack', err, { reached: false, aborted, code: undefined });
  const message = err instanceof Error ? err.message : String(err);
  return new ProviderRejectedError('slack', `the Slack client refused the call before sending it (${message})`, undefined, err);
}
