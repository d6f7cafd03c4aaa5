/**
 * The hash-chained audit log (DESIGN section 10), the part both engines share: what an entry
 * is, its hash, and the entries a write appends (the chain's verification is
 * ./audit-verify.ts). Each engine appends with its own `appendAudit` inside the transaction
 * of the write described (src/store/sqlite/store.ts, src/store/postgres/audit.ts), so an
 * entry and its write commit together or not at all. No body or address is kept: digests,
 * and recipient classes (`@example.com`, `+14…`) as the logs have them.
 */
import { hash as oneShotHash } from 'node:crypto';
import type {
  ApprovalAnswer,
  AuditActor,
  AuditContext,
  AuditEntry,
  AuditInput,
  DeliveryAmendment,
  DeliveryDecision,
  DeliveryRecord,
  DeliveryStatusChange,
  HeldRevision,
  OutboxEntry,
  OutboxState,
} from './types.js';

import type { QuestionAnswer } from './ports/answers.js';

export type { AuditActor, AuditContext, AuditEntry, AuditHead, AuditInput } from './types.js';
import { storedCall } from './sql/outbox.js';

export const GENESIS = '0'.repeat(64);
/** The kind of the entry a prune appends. */
export const PRUNED = 'pruned';

// The one-shot hash (Node >= 20.12), cheaper than createHash per entry: verify hashes every entry of the chain.
export const sha256 = (text: string): string => oneShotHash('sha256', text, 'hex');

/** JSON with object keys sorted at every depth: the same value gives the same bytes, whatever the engine returned. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  // Concatenated in loops, not filter/map/join: every audited write digests its payload.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = '{';
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(k)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}

export const digestOf = (value: unknown): string => sha256(canonicalJson(value));

/** The hash of an entry: every field but the hash itself, seq and prev included, so position and order are bound. */
export function entryHash(e: Omit<AuditEntry, 'hash'>): string {
  return sha256(JSON.stringify([e.seq, e.at, e.client, e.tool, e.notification_id, e.kind, e.digest, e.recipients, e.prev]));
}

/** Links inputs onto the chain after `head`: the entries to insert, and the head after them. */
export function chain(
  head: { seq: number; hash: string },
  inputs: readonly AuditInput[],
): { entries: AuditEntry[]; head: { seq: number; hash: string } } {
  let { seq, hash } = head;
  const entries = inputs.map((input): AuditEntry => {
    // One object of a fixed shape, not two spreads: an entry per audited write.
    const e: AuditEntry = {
      seq: ++seq,
      at: input.at,
      client: input.client,
      tool: input.tool,
      notification_id: input.notification_id,
      kind: input.kind,
      digest: input.digest,
      recipients: input.recipients,
      prev: hash,
      hash: '',
    };
    e.hash = hash = entryHash(e);
    return e;
  });
  return { entries, head: { seq, hash } };
}

/**
 * The entries a delivery record's write appends: a person's part (the payload digest they
 * saw), the exact provider request of each attempt (the payload as recorded: for email the
 * MIME bytes and the envelope, bcc included; or the attempt's own, see DeliveryAttempt.digest),
 * and the outcome, which binds the payload's digest too, so a dry run's entry names what it
 * would have sent.
 */
export function recordEntries(r: DeliveryRecord, ctx: AuditContext | undefined): AuditInput[] {
  const recipients = classes(ctx);
  const entry = (kind: string, digest: string): AuditInput => ({
    at: r.status_updated_at,
    client: r.client,
    tool: ctx?.tool ?? null,
    notification_id: r.id,
    kind,
    digest,
    recipients,
  });
  const payload = digestOf(r.payload);
  const out: AuditInput[] = [];
  if (r.approval) out.push(entry(`approval.${r.approval.outcome}`, r.approval.payload_sha256));
  // One per attempt, each with the digest of what that attempt handed its provider: two relays
  // that got the same bytes show the same digest, a later Twilio sender or a webhook fallback its own.
  for (const a of r.attempt_log) out.push(entry('request', a.digest ?? payload));
  // A record that counts attempts without logging them (an unexpected failure's) still names its request.
  if (r.attempt_log.length === 0 && r.attempts > 0) out.push(entry('request', payload));
  const outcome = {
    status: r.status,
    provider: r.provider,
    provider_message_id: r.provider_message_id,
    error_code: r.error_code,
    attempts: r.attempts,
    payload,
  };
  out.push(entry(`outcome.${r.status}`, digestOf(outcome)));
  return out;
}

/**
 * Every write the audit covers, as the store saw it happen: the one place a state change
 * becomes entries (`auditEntriesFor`). A store write that changed something names its change
 * here and appends what this returns in its own transaction; a write that changed nothing
 * (a compare-and-set that lost, a key that replayed) names none. A new audited write is one
 * more member and one more case (docs/audit.md, "Covering a new write").
 */
export type AuditedChange =
  /** A delivery record written (the send's first record). */
  | { write: 'record'; record: DeliveryRecord; ctx?: AuditContext | undefined }
  /** The outcome of an approved send's provider call written onto its row (recordRelease): no second approval entry. */
  | { write: 'release-record'; record: DeliveryRecord }
  | { write: 'receipt'; id: string; change: DeliveryStatusChange }
  | { write: 'answer'; question: string; answer: ApprovalAnswer; at: number }
  /** A waiting send put in the outbox (send_at, quiet hours). */
  | { write: 'schedule'; entry: OutboxEntry; ctx?: AuditContext | undefined }
  /** An outbox entry moved: claimed for release, expired past the grace, finished, cancelled. */
  | { write: 'outbox'; id: string; client: string | null; state: OutboxState; at: number; detail: unknown; by?: AuditActor | undefined }
  /** A console decision on a held send, or its expiry (the TTL passed: no one decided). */
  | { write: 'decision'; id: string; decision: DeliveryDecision }
  /** A caller's edit (the new exact request) or retraction of a delivery. */
  | { write: 'amend'; id: string; client: string | null; change: DeliveryAmendment }
  /** An edit of a send still waiting in the outbox: the new call as kept. */
  | { write: 'edit-waiting'; id: string; client: string | null; call: Record<string, unknown>; at: number }
  /** An edit of a held send: its new payload, back to pending_approval under a new hash. */
  | { write: 'revise-held'; id: string; client: string | null; revision: HeldRevision }
  /** A person's answer to a send's question (the first one only; ports/answers.ts). */
  | { write: 'question-answer'; id: string; client: string | null; answer: QuestionAnswer }
  /** A prune that moved the chain's anchor: the entry names the new anchor, so moving it by hand shows. */
  | { write: 'prune'; anchor_seq: number; anchor_hash: string; at: number };

const classes = (ctx: AuditContext | undefined): readonly string[] | null => (ctx?.recipients ? [...new Set(ctx.recipients)].sort() : null);

/** The outbox entry of a release written in a batch (Store.recordReleases), as finishRelease audits one. */
export const released = (it: { id: string; record: DeliveryRecord; outcome: unknown }, owner: string, at: number): AuditedChange => ({
  write: 'outbox',
  id: it.id,
  client: it.record.client,
  state: 'released',
  at,
  detail: { owner, outcome: it.outcome },
});

/** The entries `change` appends, in order. */
export function auditEntriesFor(c: AuditedChange): AuditInput[] {
  switch (c.write) {
    case 'record':
      return recordEntries(c.record, c.ctx);
    case 'release-record':
      return recordEntries({ ...c.record, approval: null }, undefined);
    case 'receipt':
      return [receiptEntry(c.id, c.change)];
    case 'answer':
      return [answerEntry(c.question, c.answer, c.at)];
    case 'schedule':
      return [scheduleEntry(c.entry, c.ctx)];
    case 'outbox':
      return [outboxEntry(c)];
    case 'decision':
      return [decisionEntry(c.id, c.decision)];
    case 'amend':
      return [amendEntry(c.id, c.client, c.change)];
    case 'edit-waiting':
      return [{ ...edit(c.id, c.client, c.at), digest: digestOf(c.call) }];
    case 'revise-held': {
      const { payload, approval, at } = c.revision;
      const digest = digestOf({ payload: digestOf(payload), payload_sha256: approval.payload_sha256, status: 'pending_approval' });
      return [{ ...edit(c.id, c.client, at), digest }];
    }
    case 'question-answer':
      return [questionAnswerEntry(c.id, c.client, c.answer)];
    case 'prune':
      return [
        {
          at: c.at,
          client: null,
          tool: null,
          notification_id: null,
          kind: PRUNED,
          digest: anchorDigest(c.anchor_seq, c.anchor_hash),
          recipients: null,
        },
      ];
  }
}

/** The entry of a waiting send put in the outbox. */
function scheduleEntry(e: OutboxEntry, ctx: AuditContext | undefined): AuditInput {
  // The call as kept (addresses and body only as its digest), when it is due, and the key it replays under.
  const digest = digestOf({
    id: e.id,
    via: e.via,
    call: storedCall(e),
    state: e.state,
    send_at: e.send_at,
    due_at: e.due_at,
    idem_key: e.idem_key,
    payload_hash: e.payload_hash,
  });
  return {
    at: e.created_at,
    client: e.client,
    tool: ctx?.tool ?? null,
    notification_id: e.id,
    kind: `outbox.${e.state}`,
    digest,
    recipients: classes(ctx),
  };
}

/** The entry of an outbox entry's move. */
function outboxEntry(c: Extract<AuditedChange, { write: 'outbox' }>): AuditInput {
  return {
    at: c.at,
    client: c.by ? c.by.client : c.client,
    tool: c.by?.tool ?? null,
    notification_id: c.id,
    kind: `outbox.${c.state}`,
    digest: digestOf({ id: c.id, state: c.state, at: c.at, detail: c.detail }),
    recipients: null,
  };
}

/** The entry of a console decision on held send `id`, or of its expiry. */
function decisionEntry(id: string, { status, approval, at }: DeliveryDecision): AuditInput {
  // Who decided (null: the clock), when, why, and the payload they were shown.
  const decided = {
    id,
    status,
    decided_by: approval.decided_by ?? null,
    decided_at: approval.decided_at ?? at,
    reason: approval.reason ?? null,
    payload_sha256: approval.payload_sha256,
  };
  return {
    at,
    client: approval.decided_by ?? null,
    tool: null,
    notification_id: id,
    kind: `decision.${status}`,
    digest: digestOf(decided),
    recipients: null,
  };
}

/** The entry of a caller's edit or retraction of delivery `id`. */
function amendEntry(id: string, client: string | null, change: DeliveryAmendment): AuditInput {
  // An edit binds the new exact request; a retraction (a post deleted, a dry run or a held
  // send withdrawn) what it took back.
  const edited = change.provider_status === 'edited';
  const digest = edited
    ? digestOf(change.payload)
    : digestOf({
        id,
        status: change.status,
        provider_status: change.provider_status,
        at: change.at,
        payload: digestOf(change.payload),
      });
  return {
    at: change.at,
    client: change.by !== undefined ? change.by.client : client,
    tool: change.by?.tool ?? null,
    notification_id: id,
    kind: edited ? 'edit' : 'retract',
    digest,
    recipients: null,
  };
}

/** An edit's entry through edit_notification (a waiting send's, a held send's), but for its digest. */
const edit = (id: string, client: string | null, at: number): Omit<AuditInput, 'digest'> => ({
  at,
  client,
  tool: 'edit_notification',
  notification_id: id,
  kind: 'edit',
  recipients: null,
});

/**
 * What a `pruned` entry's digest binds: the anchor the prune left. Verify asks the chain for an
 * entry naming the head's anchor, so an anchor moved without a prune (the oldest entries deleted
 * by hand) is a break, and a real prune changes the head hash like any other write.
 */
export const anchorDigest = (anchor_seq: number, anchor_hash: string): string => digestOf({ anchor_seq, anchor_hash });

/** The entry a receipt's change to delivery `id` appends. */
export function receiptEntry(id: string, change: DeliveryStatusChange): AuditInput {
  return {
    at: change.at,
    client: null,
    tool: null,
    notification_id: id,
    kind: `receipt.${change.status}`,
    digest: digestOf({ id, ...change }),
    recipients: null,
  };
}

/** The entry a person's answer to approval question `question` appends (the first answer only). */
export function answerEntry(question: string, answer: ApprovalAnswer, at: number): AuditInput {
  return {
    at,
    client: null,
    tool: null,
    notification_id: null,
    kind: `answer.${answer}`,
    digest: digestOf({ question, answer }),
    recipients: null,
  };
}

/** The entry of an answer to send `id`'s question: who answered is in the digest only (it may be a phone number). */
function questionAnswerEntry(id: string, client: string | null, a: QuestionAnswer): AuditInput {
  return {
    at: a.at,
    client,
    tool: null,
    notification_id: id,
    kind: 'question.answered',
    digest: digestOf({ id, choice: a.choice, by: a.by, via: a.via, at: a.at }),
    recipients: null,
  };
}
