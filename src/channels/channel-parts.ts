/**
 * The parts of a channel module that are plain data: what an approver reads of a call, a
 * notice and a forwarded message, a built payload, a provider's receipt and what a provider
 * is given. Re-exported by ./channel.ts, where the module itself is defined.
 */
import type { Logger } from '../core/log.js';
import type { ReceiptEvent } from '../store/types.js';

/** What a person approving a send reads of it: `Subject: …` or `First line: …`, and the body (its size is shown). */
export interface Summary {
  headlineLabel: string;
  headline: string;
  body: string;
  /** More lines the person reads, each `label: value` (email: Cc, Bcc, each attachment with its size and SHA-256). */
  details?: readonly { label: string; value: string }[];
}

/** What a notice to the approvers says (NOTIFY_APPROVAL_NOTIFY), in plain text: each channel escapes it for its own format. */
export interface Notice {
  subject: string;
  text: string;
  /** The held send's console page. */
  link: string;
}

/** What an escalation step carries of the send it escalates, in plain text: each channel escapes it for its own format. */
export interface Forwarded {
  subject: string;
  text: string;
}

/** Properties a channel adds to a successful result (SMS: segments, encoding). */
export type ResultMeta = Readonly<Record<string, string | number>>;

export interface BuiltPayload<P> {
  /** The exact wire payload: what the provider sends, and what the delivery log records. */
  payload: P;
  meta?: ResultMeta;
}

/** A provider's word on one message, read from its callback. */
export interface ReceiptReport {
  providerMessageId: string;
  /** The vendor's status in this server's words. */
  event: ReceiptEvent;
  /** The vendor's own status (Twilio `undelivered`) and error code, kept as the last provider status. */
  providerStatus: string;
  code: string | null;
  /** Our notification id, when the callback carried it under its signature (the URL we gave the provider). */
  notificationId?: string;
}

/** `verified: false`: unsigned, mis-signed, or this server cannot check it; nothing may change. `report: null`: a status not tracked. */
export type ReceiptReading = { verified: false } | { verified: true; report: ReceiptReport | null };

/** What every provider is given besides its channel's settings. */
export interface ProviderContext {
  log: Logger;
  /** Requests in flight at once (NOTIFY_PROVIDER_CONCURRENCY); more wait in order. */
  maxConcurrent: number;
  /** How long one request may take; the send's budget may end it sooner. */
  requestTimeoutMs: number;
}
