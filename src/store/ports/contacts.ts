/** The contacts port: approved first contacts, and the recipients who opted out. */

/** A recipient a person approved a first contact with, per channel (`notify-mcp contacts`). */
export interface ContactRecord {
  via: string;
  recipient: string;
  approved_at: number;
  /** Who made the send that was approved. */
  client: string | null;
}

/** What a claim checks first, in the same statement: opted-out recipients of channel `via`. */
export interface OptOutCheck {
  via: string;
  recipients: readonly string[];
}

export interface ContactsPort {
  /** The first recipient of `check` that has opted out of its channel, if any. */
  findOptedOut(check: OptOutCheck): Promise<string | undefined>;
  addOptOut(via: string, recipient: string, now: number): Promise<void>;
  /** The recipients of `recipients` that are known contacts of channel `via` (an approved first contact). */
  knownContacts(via: string, recipients: readonly string[]): Promise<Set<string>>;
  /** Remembers approved first contacts; an existing one keeps its first approval. */
  addContacts(via: string, recipients: readonly string[], now: number, client: string | null): Promise<void>;
  /** Every known contact, by channel and recipient. */
  listContacts(): Promise<ContactRecord[]>;
  /** Forgets one contact: its next send is a first contact again. False when it was not known. */
  forgetContact(via: string, recipient: string): Promise<boolean>;
}
