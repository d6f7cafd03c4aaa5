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

/** A failure that becomes an `isError: true` tool result, never a thrown JSON-RPC error. */
export class NotifyError extends Error {
  override readonly name = 'NotifyError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: {
      path?: string;
      via?: string;
      retryAfterS?: number;
      resetsAt?: string;
      notificationId?: string;
      cause?: unknown;
      /** For the refusal's log line only (never in the tool result): each recipient's class, not its address. */
      recipientClasses?: string[];
    } = {},
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
