/**
 * The error codes a tool result carries (clients branch on them, so a renamed one breaks
 * them), and the typed errors that carry them from the pipeline to the tool result. Vendor
 * errors are mapped to these at each provider adapter, so nothing above the providers sees
 * a vendor type.
 */
export const ERROR_CODES = [
  'INVALID_VIA',
  'MISSING_FIELD',
  'FIELD_NOT_ON_CHANNEL',
  'INVALID_FIELD',
  'TOO_LONG',
  'CHANNEL_UNAVAILABLE',
  'RECIPIENT_NOT_ALLOWED',
  'RECIPIENT_OPTED_OUT',
  'IDEMPOTENCY_CONFLICT',
  'IDEMPOTENCY_IN_PROGRESS',
  'RATE_LIMITED',
  'PROVIDER_REJECTED',
  'PROVIDER_UNAVAILABLE',
  'DELIVERY_UNKNOWN',
  'NOT_FOUND',
  /** The message was handed to its provider and cannot be taken back or changed there (email, SMS). */
  'ALREADY_SENT',
  /** The operator's policy needs a person's approval and this client cannot ask one: nothing was sent. */
  'APPROVAL_REQUIRED',
  /** The person declined the send (or dismissed the question): nothing was sent. */
  'APPROVAL_DECLINED',
  /** The store (database) is down or cut off: nothing was sent or changed; retry after retry_after_s. */
  'STORE_UNAVAILABLE',
  /** The client cancelled the call before the provider was called: nothing was sent. */
  'CANCELLED',
  /** The client used up one of its NOTIFY_CAPS for this period: nothing was sent until resets_at. */
  'CAP_REACHED',
  /** A bug on our side; logged with its stack, never retried by the server. */
  'INTERNAL_ERROR',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The `structuredContent.error` object of a failed tool call. */
export interface ToolErrorBody {
  code: ErrorCode | string;
  message: string;
  path?: string;
  via?: string;
  retry_after_s?: number;
  /** CAP_REACHED: when the cap's period ends (RFC 3339). */
  resets_at?: string;
  /** The notification a failure is recorded under (DELIVERY_UNKNOWN): get_notification and receipts settle it. */
  notification_id?: string;
}

/** What a NotifyError may carry besides its message: every code's fields (see ErrorDetails for which code carries which). */
export interface NotifyErrorDetails {
  path?: string;
  via?: string;
  retryAfterS?: number;
  resetsAt?: string;
  notificationId?: string;
  cause?: unknown;
  /** For the refusal's log line only (never in the tool result): each recipient's class, not its address. */
  recipientClasses?: string[];
}

/** A failure that becomes an `isError: true` tool result, never a thrown JSON-RPC error. Built by `errors` (one factory per code). */
export class NotifyError extends Error {
  override readonly name = 'NotifyError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: NotifyErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
  }

  toBody(): ToolErrorBody {
    const body: ToolErrorBody = { code: this.code, message: this.message };
    if (this.details.path !== undefined) body.path = this.details.path;
    if (this.details.via !== undefined) body.via = this.details.via;
    if (this.details.retryAfterS !== undefined) body.retry_after_s = this.details.retryAfterS;
    if (this.details.resetsAt !== undefined) body.resets_at = this.details.resetsAt;
    if (this.details.notificationId !== undefined) body.notification_id = this.details.notificationId;
    return body;
  }
}

/** Where a refusal points: the field (a JSON Pointer into the arguments as sent) and the channel. */
interface Located {
  path?: string;
  via?: string;
  cause?: unknown;
}

/** The fields each code carries (DESIGN section 1): a factory takes exactly these. */
export interface ErrorDetails {
  INVALID_VIA: Located;
  MISSING_FIELD: Located;
  FIELD_NOT_ON_CHANNEL: Located;
  INVALID_FIELD: Located;
  TOO_LONG: Located;
  CHANNEL_UNAVAILABLE: { via: string };
  RECIPIENT_NOT_ALLOWED: { via: string; path?: string };
  RECIPIENT_OPTED_OUT: { via: string };
  IDEMPOTENCY_CONFLICT: Located;
  /** retryAfterS: when the other call should have an outcome (absent for a release taken over: the outbox retries it). */
  IDEMPOTENCY_IN_PROGRESS: Located & { retryAfterS?: number };
  RATE_LIMITED: Located & { retryAfterS: number };
  PROVIDER_REJECTED: Located;
  PROVIDER_UNAVAILABLE: Located & { retryAfterS?: number };
  /** notificationId: the record that get_notification and receipts settle (the pipeline sets it when the provider's caller did not know it). */
  DELIVERY_UNKNOWN: Located & { notificationId?: string };
  NOT_FOUND: { path?: string; via?: string };
  ALREADY_SENT: { path?: string; via?: string };
  APPROVAL_REQUIRED: { path?: string; via?: string };
  APPROVAL_DECLINED: { via: string };
  /** notificationId: a scheduling whose write the database did not confirm (it may stand). */
  STORE_UNAVAILABLE: { retryAfterS: number; via?: string; notificationId?: string; cause?: unknown };
  CANCELLED: Located;
  CAP_REACHED: { via: string; resetsAt: string };
  INTERNAL_ERROR: { cause?: unknown };
}

const make =
  <C extends ErrorCode>(code: C) =>
  (message: string, details: ErrorDetails[C]): NotifyError =>
    new NotifyError(code, message, details);

/** Where a recipient's opt-out stopped a call: a send, a scheduling, or a person's approval of a held send. */
export type OptOutMoment = 'send' | 'schedule' | 'approve';

const OPTED_OUT: Record<OptOutMoment, (recipient: string) => string> = {
  send: (r) => `${r} has opted out (replied STOP); nothing was sent. Do not retry.`,
  schedule: (r) => `${r} has opted out (replied STOP); nothing was scheduled. Do not retry.`,
  approve: (r) => `${r} has opted out (replied STOP) since this send was held; approving cannot send it. Decline it.`,
};

/**
 * One factory per error code, each taking the fields its code carries (ErrorDetails), so
 * that a code's details cannot be forgotten or misplaced (the Slack SDK's
 * packages/web-api/src/errors.ts is the model). Where the same situation is refused from
 * several places, the factory owns the message; elsewhere the caller words the situation.
 */
export const errors = {
  invalidVia: make('INVALID_VIA'),
  missingField: make('MISSING_FIELD'),
  fieldNotOnChannel: make('FIELD_NOT_ON_CHANNEL'),
  invalidField: make('INVALID_FIELD'),
  tooLong: make('TOO_LONG'),
  channelUnavailable: make('CHANNEL_UNAVAILABLE'),
  recipientNotAllowed: make('RECIPIENT_NOT_ALLOWED'),
  /** The recipient replied STOP (Twilio 21610, remembered): nothing leaves for them. */
  recipientOptedOut: (recipient: string, via: string, at: OptOutMoment = 'send'): NotifyError =>
    new NotifyError('RECIPIENT_OPTED_OUT', OPTED_OUT[at](recipient), { via }),
  idempotencyConflict: make('IDEMPOTENCY_CONFLICT'),
  idempotencyInProgress: make('IDEMPOTENCY_IN_PROGRESS'),
  rateLimited: make('RATE_LIMITED'),
  providerRejected: make('PROVIDER_REJECTED'),
  providerUnavailable: make('PROVIDER_UNAVAILABLE'),
  deliveryUnknown: make('DELIVERY_UNKNOWN'),
  notFound: make('NOT_FOUND'),
  /** A get, edit or retract of an id this client did not send (or that does not exist: the two are not told apart). */
  notYourNotification: (id: string, path = '/id'): NotifyError =>
    new NotifyError(
      'NOT_FOUND',
      `No notification ${id} was sent by this client. Pass an id that one of your own send_notification results gave (e.g. ntf_0123456789abcdef0123456789abcdef).`,
      { path },
    ),
  alreadySent: make('ALREADY_SENT'),
  approvalRequired: make('APPROVAL_REQUIRED'),
  approvalDeclined: make('APPROVAL_DECLINED'),
  /**
   * The store is down or cut off (the store's StoreUnavailableError, mapped here and only
   * here). `via`: the channel of a send stopped before its provider call, which sent
   * nothing (its message says so and names the idempotency key); absent for any other call.
   */
  storeUnavailable: (retryAfterS: number, via?: string, cause?: unknown): NotifyError =>
    via === undefined
      ? new NotifyError(
          'STORE_UNAVAILABLE',
          `This server's database is unavailable right now, so the call could not be completed. Try the same call again in ${retryAfterS} s.`,
          { retryAfterS, cause },
        )
      : new NotifyError(
          'STORE_UNAVAILABLE',
          `Try the same call again in ${retryAfterS} s (with the same idempotency_key, if it has one). Nothing was sent: this server's database is unavailable right now, and a send is only made once it is recorded safely.`,
          { via, retryAfterS, cause },
        ),
  /**
   * A scheduling whose write the database did not confirm: its connection may have been cut
   * after the commit, so the send may stand and leave at its time. The caller reads the id to
   * learn which; a blind retry could schedule it twice.
   */
  storeUnconfirmed: (retryAfterS: number, via: string, notificationId: string, cause?: unknown): NotifyError =>
    new NotifyError(
      'STORE_UNAVAILABLE',
      `This server's database did not confirm the scheduling, so ${notificationId} may or may not be scheduled. In ${retryAfterS} s, read it with get_notification (id ${notificationId}): if it is found it stands (retract it if unwanted); if NOT_FOUND, send the call again.`,
      { via, retryAfterS, notificationId, cause },
    ),
  cancelled: make('CANCELLED'),
  /** The call was cancelled before its provider was called. */
  cancelledBeforeSend: (via: string, cause: unknown): NotifyError =>
    new NotifyError('CANCELLED', 'The call was cancelled before the provider was called; nothing was sent.', { via, cause }),
  capReached: make('CAP_REACHED'),
  /** A bug on our side: the caller logs it with its stack. */
  internalError: (cause?: unknown): NotifyError =>
    new NotifyError(
      'INTERNAL_ERROR',
      'The server failed unexpectedly; nothing is known to have been sent. Try again later.',
      cause === undefined ? {} : { cause },
    ),
} as const;
