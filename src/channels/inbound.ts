/**
 * What a person sends back in a channel (DESIGN section 11): a Slack button click, an SMS
 * reply. A channel module reads its vendor's signed request into one of these words
 * (`ChannelModule.inbound`); the answer use case (src/notification/replies.ts) acts on it.
 */

/** A callback as it reached POST /webhooks/<path> or a channel's inbound path. */
export interface InboundCallback {
  /** The query string as received, `?…` or empty (signatures cover it). */
  search: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: string;
}

/** How an answer attempt ended, as the person who made it is told (a Slack click's update). */
export type ReplyOutcome =
  | { kind: 'recorded'; choice: string; by: string; via: string }
  /** Someone answered first: what, who, and through what. */
  | { kind: 'answered'; choice: string; by: string; via: string }
  /** Nothing changed, and why, in a sentence the person can read. */
  | { kind: 'refused'; why: string };

export type InboundReply =
  /** A click on one of a message's answer buttons: the token the button carries and the choice's position. */
  | {
      kind: 'choice';
      token: string;
      index: number;
      /** Who clicked (Slack: the user ID). */
      by: string;
      /** Tells the person (and the channel) how it ended; a throw is logged by the caller, the answer stands. */
      respond(outcome: ReplyOutcome): Promise<void>;
    }
  /** A text reply (SMS): who sent it, and the reply code it reads as (1-based), if any; the text itself goes no further. */
  | { kind: 'code'; from: string; code: number | null }
  /** An opt-out word (STOP): the sender is to get nothing more on this channel; never an answer. */
  | { kind: 'opt_out'; from: string; word: string };

/**
 * A request on a channel's inbound path. `verified: false`: unsigned, mis-signed, stale, or
 * this server cannot check it: nothing may change. `reply: null`: verified, but nothing to act on.
 * `ack`: the body the vendor expects back with a 200 (Twilio: empty TwiML).
 */
export type InboundReading =
  | { verified: false; why: string }
  | { verified: true; reply: InboundReply | null; why?: string; ack?: { contentType: string; body: string } };

/** A channel's inbound path (where the vendor posts) and its reader, given the request as received. */
export interface InboundPath {
  readonly path: string;
  read(callback: InboundCallback, nowMs: number): Promise<InboundReading>;
}

/** Where a channel module's replies arrive, and how it reads them under settings S (ChannelModule.inbound). */
export interface InboundModule<S> {
  path: string;
  read(settings: S, callback: InboundCallback, nowMs: number): Promise<InboundReading>;
}
