/**
 * The provider contract: a provider takes a channel's exact wire payload (built by the
 * channel's module and recorded in the delivery log) and hands it to a vendor. Each
 * channel's adapter (src/channels/<name>/) declares its payload type. Providers
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
  /** The provider's own word for the message on acceptance (Twilio: `queued`, `accepted`…), when it gives one. */
  providerStatus?: string;
}

export interface Provider<Payload = unknown> {
  /** `smtp`, `twilio`, `slack`, or `dry-run`. */
  readonly name: string;
  /** One attempt; retries are the caller's (src/providers/retry.ts). */
  send(payload: Payload, ctx: SendContext): Promise<ProviderReceipt>;
  close?(): Promise<void>;
}
