/**
 * The provider contract: a provider takes a channel's exact wire payload (built by the
 * notification layer and recorded in the delivery log) and hands it to a vendor. Providers
 * know nothing of MCP or of the union; they throw the typed errors of ./errors.ts.
 */
export interface SendContext {
  /** The notification id (`ntf_…`), for headers and logs. */
  notificationId: string;
  /** Aborted when the send's time budget runs out. */
  signal: AbortSignal;
  /** When `signal` aborts (epoch ms), so that a request is not started with too little time left. */
  deadline?: number;
  /**
   * Aborted when the caller cancelled the call. A request not yet started (still waiting for
   * a slot) is dropped with SendCancelledError; one already started runs on, within the
   * budget, so that its outcome is known and recorded.
   */
  cancel?: AbortSignal;
}

export interface ProviderReceipt {
  providerMessageId?: string;
}

export interface Provider<Payload = unknown> {
  /** `smtp`, `twilio`, `slack`, or `dry-run`. */
  readonly name: string;
  /** One attempt; retries are the caller's (src/providers/retry.ts). */
  send(payload: Payload, ctx: SendContext): Promise<ProviderReceipt>;
  close?(): Promise<void>;
}

/** Email as it goes over SMTP: the envelope and the complete MIME message. */
export interface EmailPayload {
  envelope: { from: string; to: string[] };
  messageId: string;
  /** The complete RFC 5322 message as nodemailer builds it. */
  raw: string;
}

/** The form fields of Twilio's `POST /Accounts/{sid}/Messages.json`. */
export interface SmsPayload {
  To: string;
  Body: string;
  From?: string;
  MessagingServiceSid?: string;
}

/** The arguments of Slack's `chat.postMessage`. */
export interface SlackPayload {
  channel: string;
  text: string;
  thread_ts?: string;
}
