/**
 * The provider contract: a provider takes a channel's exact wire payload (built by the
 * channel's module and recorded in the delivery log) and hands it to a vendor. Each
 * channel's adapter (src/channels/<name>/) declares its payload type. Providers
 * know nothing of MCP or of the union; they throw the typed errors of ./errors.ts.
 */
import type { Endpoint, ProviderError } from './errors.js';

export type { Endpoint } from './errors.js';

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
  /**
   * Called once the request holds its slot and is about to be written (./slots.ts): the
   * caller marks the send as possibly started here, not while it waits. A throw ends the
   * attempt with nothing sent.
   */
  starting?: () => Promise<void>;
  /** When a request still waiting for a slot gives up (epoch ms, ProviderBusyError); at most `deadline`. */
  startBy?: number;
  /**
   * A failover provider calls this for each endpoint it leaves because it clearly did not
   * accept (`err.endpoint` names it), before trying the next: each is an attempt of its own
   * in the delivery log and the audit (src/providers/retry.ts).
   */
  failedOver?: (err: ProviderError) => void;
}

export interface ProviderReceipt {
  providerMessageId?: string;
  /** Where the provider put the message, when it says (Slack: the channel ID, whatever the payload named). */
  conversation?: string;
  /** The provider's own word for the message on acceptance (Twilio: `queued`, `accepted`…), when it gives one. */
  providerStatus?: string;
  /** The endpoint that took it, when the provider has several or names the one it used. */
  endpoint?: Endpoint;
}

/** A message a provider took: its payload as recorded, and the provider's id for it. */
export interface Posted<Payload> {
  payload: Payload;
  providerMessageId: string;
  /** The provider's conversation, as its receipt said (Slack: the channel ID), when recorded. */
  conversation?: string | undefined;
}

export interface Provider<Payload = unknown> {
  /** `smtp`, `twilio`, `slack`, or `dry-run`. */
  readonly name: string;
  /**
   * True when the provider waits for a slot of its own and calls `ctx.starting` once it holds
   * one; otherwise the caller calls it just before `send`.
   */
  readonly callsStarting?: boolean;
  /** One attempt; retries are the caller's (src/providers/retry.ts). */
  send(payload: Payload, ctx: SendContext): Promise<ProviderReceipt>;
  /** Replaces a message it took with `next` (Slack: chat.update); absent where the vendor cannot change a sent message. */
  edit?(posted: Posted<Payload>, next: Payload, ctx: SendContext): Promise<void>;
  /** Takes a message it took back (Slack: chat.delete); absent where the vendor cannot. */
  retract?(posted: Posted<Payload>, ctx: SendContext): Promise<void>;
  close?(): Promise<void>;
}
