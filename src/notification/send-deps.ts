/**
 * What the send use cases take and give: their dependencies, a caller's options, and the
 * answer. Types only, below every use case, so the use cases and their shared steps
 * (./deliver.ts) import them without importing one another.
 */
import type { ConnectedChannel } from '../channels/channel.js';
import type { Logger } from '../core/log.js';
import type { CapGate } from '../policy/caps.js';
import type { RateGate } from '../policy/rate-limit.js';
import type { AnswersPort } from '../store/ports/answers.js';
import type { AuditContext } from '../store/ports/audit.js';
import type { ClaimsPort } from '../store/ports/claims.js';
import type { ContactsPort, OptOutCheck } from '../store/ports/contacts.js';
import type { DeliveriesPort, DeliveryRecord, RecordWrite } from '../store/ports/deliveries.js';
import type { OutboxPort } from '../store/ports/outbox.js';
import type { ApprovalRound } from './approval.js';
import type { SendSettings } from './settings.js';

export type { RateGate } from '../policy/rate-limit.js';
export type { SendSettings } from './settings.js';

/** A send's answer; a channel's `meta` adds its own properties (SMS: segments, encoding). */
export interface SendResult {
  id: string;
  via: string;
  status: 'sent' | 'dry_run' | 'scheduled' | 'held' | 'pending_approval';
  provider: string;
  provider_message_id?: string;
  replayed?: boolean;
  accepted_at: string;
  [meta: string]: string | number | boolean | undefined;
}

/** The store ports the send use cases take: the delivery log, idempotency claims, the outbox, contacts and opt-outs, questions. */
export type SendPorts = DeliveriesPort & ClaimsPort & OutboxPort & ContactsPort & Pick<AnswersPort, 'recordQuestion' | 'getQuestion'>;

export interface PipelineDeps {
  config: SendSettings;
  store: SendPorts;
  /** Every channel, with its provider (src/channels/connect.ts). */
  channels: readonly ConnectedChannel[];
  log: Logger;
  now: () => number;
  rateGate?: RateGate;
  /** NOTIFY_CAPS, charged just before a send leaves. */
  capGate?: CapGate;
  /** The store's answer key (app.ts), when answer links can be made (NOTIFY_PUBLIC_URL): a send that asks keeps its token's hash. */
  answerKey?: string;
  /** The release loop, told when this process schedules a send (./outbox.ts). */
  outbox?: { wake(dueAt: number): void };
  /** Told of each send that awaits approval in the console, once, as its row is written (NOTIFY_APPROVAL_NOTIFY); must not throw. */
  onAwaitingApproval?: (awaiting: { id: string; via: string; client: string | null; recipientClasses: string[] }) => void;
}

export interface SendOptions {
  /** Authenticated client (HTTP token) or clientInfo.name; scopes idempotency keys. */
  client: string | null;
  /** Called before each retry wait, for progress notifications. */
  onRetry?: (attempt: number, delayMs: number, reason: string) => void;
  /**
   * The client cancelled the call (MCP). Until the provider is called, the send stops with
   * CANCELLED and nothing is sent; once a provider call has started it runs to its outcome,
   * which is recorded like any other.
   */
  signal?: AbortSignal;
  /** What the client can do, and what a person answered, when the approval policy applies (./approval.ts). */
  approval?: ApprovalRound;
  /**
   * The release of a waiting send (./outbox.ts): sent now under this notification id, claimed
   * under this key, and never scheduled again. `deferrable`: the release may wait again in the
   * outbox, so a congested provider (RATE_LIMITED, PROVIDER_UNAVAILABLE, nothing sent) leaves
   * no record, and a request waits for a provider slot at most half of what is left.
   * `escalates`: an escalation step of that first send, whose link answers the first send's
   * question (its token was kept so when the step was scheduled: ./escalate.ts).
   */
  release?: { id: string; key: string; write?: ReleaseWriter; deferrable?: boolean; escalates?: string };
  /** The tool the call came through, for the audit log. */
  tool?: string;
}

/**
 * How a released dry run writes its record (./outbox.ts batches them): with the end of its
 * release, fenced by the release's owner, in place of an idempotency claim. A dry run calls
 * no provider, so a release that dies before its record is simply released again.
 */
export type ReleaseWriter = (
  record: DeliveryRecord,
  opts: { audit: AuditContext; optOut?: OptOutCheck },
  result: SendResult,
) => Promise<RecordWrite>;
