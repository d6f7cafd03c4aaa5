/**
 * The approval step of the send pipeline: when the operator's policy (NOTIFY_APPROVAL) says a
 * send needs a person's approval, the exact provider payload is built, hashed and shown to the
 * person through the client; only an answer bound to that hash lets the send go on. Knows
 * nothing of MCP, and holds nothing while a person thinks.
 */
import { createHash } from 'node:crypto';
import type { BuiltPayload, TypedChannel } from '../channels/channel.js';
import { errors } from '../core/errors.js';
import { newNotificationId } from '../core/ids.js';
import type { Logger } from '../core/log.js';
import type { ClaimsPort } from '../store/ports/claims.js';
import type { ContactsPort } from '../store/ports/contacts.js';
import type { ApprovalRecord, DeliveriesPort } from '../store/ports/deliveries.js';
import { canonicalJson } from '@notify-mcp/union';
import { ruleName, type ApprovalRule } from './approval-rules.js';
import { IDEMPOTENCY_TTL_MS } from './idempotency.js';
import { newDeliveryRecord } from './new-record.js';
import type { SendSettings } from './settings.js';

/** What the approval step needs of the send pipeline's dependencies. */
export interface ApprovalDeps {
  config: SendSettings;
  store: DeliveriesPort & ClaimsPort & ContactsPort;
  log: Logger;
  now: () => number;
}

/** What a person approves: one notification id, its time, the hash of the payload they saw, and the call's idempotency key. */
export interface ApprovalGrant {
  id: string;
  at: number;
  payload_sha256: string;
  /**
   * The key the approved call came with (null: none). The send is claimed under it (or under
   * the approval id when null), so the answer replayed with another key would send again.
   */
  key: string | null;
}

/** One round of a send as the approval step sees it. */
export interface ApprovalRound {
  /** The client can put a question to a person (form elicitation, in either protocol era). */
  canAsk: boolean;
  /** The grant a person answered in the previous round, and how (a declined or dismissed question is `decline`). */
  previous?: { grant: ApprovalGrant; answer: 'accept' | 'decline' };
}

/** The question for a person: what the tool layer shows, and the grant an `accept` gives. */
export interface ApprovalRequest {
  grant: ApprovalGrant;
  via: string;
  /** Everything the person needs to decide, in plain text. */
  message: string;
  reasons: string[];
}

/** A person must be asked first: the call's answer is this question, which the tool layer puts to them. */
export interface ApprovalAsk {
  kind: 'ask';
  request: ApprovalRequest;
}

/** Whether a use case's answer is a question for a person rather than its result. */
export function isApprovalAsk<R extends object>(answer: R | ApprovalAsk): answer is ApprovalAsk {
  return (answer as { kind?: unknown }).kind === 'ask' && typeof (answer as { request?: unknown }).request === 'object';
}

/** A send that waits for a person's approval in the operator console; its row is recorded `pending_approval`. */
export interface AwaitingApproval {
  id: string;
  via: string;
  at: number;
}

/**
 * What the approval step decided: the send goes on (with the payload a person approved, if one
 * did), it waits in the console, or a person is asked first.
 */
export type ApprovalStep<P> = { kind: 'go'; approved?: Approved<P> } | { kind: 'awaiting'; awaiting: AwaitingApproval } | ApprovalAsk;

const GO = { kind: 'go' } as const;

/** An approved send: the payload the person saw, to be sent as it is, under the approved id. */
export interface Approved<P> {
  id: string;
  at: number;
  built: BuiltPayload<P>;
  record: ApprovalRecord;
}

/** SHA-256 of the payload's canonical JSON: what an approval is bound to. */
export function payloadSha256(payload: unknown): string {
  return createHash('sha256').update(canonicalJson(payload)).digest('hex');
}

/** The rules that apply to this call, each with the words a person reads. */
async function matchingRules<C, P>(
  deps: ApprovalDeps,
  channel: TypedChannel<C, P>,
  call: C,
  rules: readonly ApprovalRule[],
): Promise<{ names: string[]; why: string[]; firstContacts: string[] }> {
  const recipients = channel.recipients(call);
  const names: string[] = [];
  const why: string[] = [];
  let firstContacts: string[] = [];
  for (const rule of rules) {
    const name = ruleName(rule);
    let reason: string | undefined;
    switch (rule.kind) {
      case 'all':
        reason = 'every send needs approval (all)';
        break;
      case 'channel':
        if (rule.via === channel.name) reason = `every ${channel.name} send needs approval (${name})`;
        break;
      case 'recipients':
        if (recipients.length > rule.over) reason = `${recipients.length} recipients, more than ${rule.over} (${name})`;
        break;
      case 'channel-rule':
        if (channel.approvalRule(rule.name, call)) reason = `the ${channel.name} rule ${name} applies`;
        break;
      case 'first-contact': {
        const known = await deps.store.knownContacts(channel.name, recipients);
        firstContacts = recipients.filter((r) => !known.has(r));
        if (firstContacts.length > 0) reason = `first contact with ${firstContacts.map((r) => callerText(r)).join(', ')} (${name})`;
        break;
      }
    }
    if (reason !== undefined) {
      names.push(name);
      why.push(reason);
    }
  }
  return { names, why, firstContacts };
}

/** How much of a caller's headline the question quotes (a Slack first line may run to 40,000 characters). */
const HEADLINE_CHARS = 200;
/**
 * Every character that can end a line somewhere (LF, CR, VT, FF, NEL, U+2028, U+2029), every
 * other control character, and the bidi controls that reorder what a person reads.
 */
const UNSAFE_IN_LINE = /[\p{Cc}\u2028\u2029\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;

/**
 * Caller text as part of one line of the question: each unsafe character is written as its
 * code point (`\u{A}`), so caller text can never start a line of its own, nor look like one
 * of the server's, whatever the separator. Cut to `max` characters, saying how many more.
 */
export function callerText(text: string, max = Number.POSITIVE_INFINITY): string {
  const chars = [...text];
  const kept = chars.length > max ? chars.slice(0, max).join('') : text;
  const shown = kept.replace(UNSAFE_IN_LINE, (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`);
  return chars.length > max ? `${shown}… (${chars.length - max} more characters)` : shown;
}

/**
 * The server's own lines (what is asked, why, sizes, the hash) come first; caller text
 * follows, each field on one line after its label, through callerText.
 */
function questionText<C, P>(
  channel: TypedChannel<C, P>,
  call: C,
  why: string[],
  grant: ApprovalGrant,
  /** What is approved, as the first line names it. */
  subject = `this ${channel.name} notification`,
): string {
  const { headline, headlineLabel, body, details = [] } = channel.summary(call);
  return [
    `Approve ${subject}? Nothing is sent unless you approve.`,
    `Why approval is needed: ${why.join('; ')}`,
    `Channel: ${channel.name}`,
    `Body: ${[...body].length} characters`,
    `Approving sends exactly this message (payload sha256 ${grant.payload_sha256.slice(0, 16)}…); a changed message asks again.`,
    `Recipients: ${channel
      .recipients(call)
      .map((r) => callerText(r))
      .join(', ')}`,
    `${headlineLabel}: ${callerText(headline, HEADLINE_CHARS)}`,
    ...details.map((d) => `${d.label}: ${callerText(d.value)}`),
  ].join('\n');
}

/**
 * Decides whether this send may go on: `go` when no rule applies (nothing changes), `go`
 * with the approved payload when a person accepted exactly this payload, `awaiting` when it
 * waits in the console (its row written), `ask` when a person is to be asked (or asked again:
 * the payload changed); otherwise it refuses: APPROVAL_DECLINED, or APPROVAL_REQUIRED (the
 * client cannot ask). Each refusal leaves a delivery record.
 *
 * A round arrives as `ApprovalRound` (can the client ask, and what the person answered last
 * round, with the grant it answered); the question leaves as the `ask` answer, which the tool
 * layer turns into an elicitation. No idempotency claim, provider slot or lock is held
 * meanwhile; the send's budget starts when the approved call comes back.
 */
export async function approveSend<C, P>(
  deps: ApprovalDeps,
  channel: TypedChannel<C, P>,
  call: C,
  round: ApprovalRound | undefined,
  client: string | null,
  key: string | null,
  /** The id a send released from the outbox already has: held, it keeps it. */
  releaseId?: string,
): Promise<ApprovalStep<P>> {
  const rules = deps.config.approval.rules;
  if (rules.length === 0) return GO;
  const { names, why, firstContacts } = await matchingRules(deps, channel, call, rules);
  const previous = round?.previous;
  if (names.length === 0 && !previous) return GO;

  // The answered grant's id and time rebuild the very bytes the person saw.
  const build = async (id: string, at: number) => {
    const built = await channel.buildPayload(call, id, deps.config.sendBudgetMs / 2, at);
    return { built, grant: { id, at, payload_sha256: payloadSha256(built.payload), key } };
  };
  let { built, grant } = await build(previous?.grant.id ?? releaseId ?? newNotificationId(), previous?.grant.at ?? deps.now());
  // No rule applies any more, yet the call carries a person's answer about this very message:
  // a first contact that its own approved send (or another) recorded meanwhile. It stays that
  // message, so the same answer sent again replays (or stays declined) instead of going out
  // as a new send. Another payload or key is a new message that needs no approval.
  if (names.length === 0 && (previous!.grant.payload_sha256 !== grant.payload_sha256 || previous!.grant.key !== key)) return GO;
  const record = (outcome: ApprovalRecord['outcome']): ApprovalRecord => ({
    outcome,
    reasons: names,
    payload_sha256: grant.payload_sha256,
  });
  const log = deps.log.child({ notificationId: grant.id, via: channel.name, client });

  // One question, one answer: the first answer to reach the store stands, and a later one
  // (a decline after an accept, or the reverse, on any replica) is answered as it was.
  const answered = previous && (await deps.store.answerApproval(previous.grant.id, previous.answer, deps.now(), IDEMPOTENCY_TTL_MS));
  if (answered?.answer === 'decline') {
    // Recorded once, by the answer that stood: the refusal row carries the question's id.
    if (answered.first) await recordRefusal(deps, channel, built.payload, grant, client, 'APPROVAL_DECLINED', record('declined'), call);
    log.info('approval declined', { reasons: names, ...(answered.first ? {} : { answeredBefore: true }) });
    throw errors.approvalDeclined(
      `The person asked to approve this ${channel.name} send declined it${answered.first ? '' : ' (this question was answered before; that answer stands)'}; nothing was sent. Do not resend it unchanged; ask the person what to change.`,
      { via: channel.name },
    );
  }
  if (previous && answered?.answer === 'accept') {
    if (previous.grant.payload_sha256 === grant.payload_sha256 && previous.grant.key === key) {
      if (firstContacts.length > 0) await deps.store.addContacts(channel.name, firstContacts, deps.now(), client);
      log.info('approval accepted', { reasons: names });
      return { kind: 'go', approved: { id: grant.id, at: grant.at, built, record: record('approved') } };
    }
    // The call came back with another payload (or key) than the one approved: that one is
    // not approved, and the person is asked about it as a new message.
    log.warn('approved payload changed; asking again', { reasons: names });
    ({ built, grant } = await build(newNotificationId(), deps.now()));
  }
  const mode = deps.config.approval.mode ?? 'ask';
  if (mode === 'console' || (mode === 'ask-then-console' && !round?.canAsk)) {
    await recordHeld(deps, channel, built.payload, grant, client, {
      ...record('pending'),
      recipients: channel.recipients(call),
      first_contacts: firstContacts,
      call: heldCall(call),
    });
    log.info('approval held for the console', { reasons: names });
    return { kind: 'awaiting', awaiting: { id: grant.id, via: channel.name, at: grant.at } };
  }
  if (!round?.canAsk) {
    await recordRefusal(deps, channel, built.payload, grant, client, 'APPROVAL_REQUIRED', record('required'), call);
    log.warn('approval required but the client cannot ask', { reasons: names });
    throw errors.approvalRequired(
      `This ${channel.name} send needs a person's approval (${why.join('; ')}), and this client cannot ask one (it does not support MCP elicitation); nothing was sent. ` +
        'Tell the user that the server asks for approval, and have them send it from a client that supports elicitation (e.g. Claude Code, VS Code), or ask the operator to change NOTIFY_APPROVAL. Do not retry unchanged.',
      { via: channel.name },
    );
  }
  return { kind: 'ask', request: { grant, via: channel.name, reasons: names, message: questionText(channel, call, why, grant) } };
}

/**
 * An edit of a posted message meets the approval rules of a send: the edited message, as a
 * send, would it need a person? Then a person is asked about exactly that payload (ask mode,
 * a client that can ask: the `ask` answer, bound to its hash); an answer to that question lets
 * the edit go on (`go`), a decline refuses it. A posted message's edit cannot wait in the
 * console, so where no one can be asked now it is APPROVAL_REQUIRED, with the way that is
 * asked: a new send.
 */
export async function approveEdit<C, P>(
  deps: ApprovalDeps,
  channel: TypedChannel<C, P>,
  call: C,
  payload: P,
  id: string,
  round: ApprovalRound | undefined,
): Promise<typeof GO | ApprovalAsk> {
  const rules = deps.config.approval.rules;
  if (rules.length === 0) return GO;
  const { names, why } = await matchingRules(deps, channel, call, rules);
  if (names.length === 0) return GO;
  // Its own question id: an answer about the post itself never answers an edit of it.
  const grant: ApprovalGrant = { id: `${id}:edit`, at: deps.now(), payload_sha256: payloadSha256(payload), key: null };
  const previous = round?.previous;
  if (previous && previous.grant.id === grant.id && previous.grant.payload_sha256 === grant.payload_sha256) {
    if (previous.answer === 'accept') return GO;
    throw errors.approvalDeclined(
      `The person asked to approve this edit of ${id} declined it; nothing was changed. Ask them what to change.`,
      { via: channel.name },
    );
  }
  const mode = deps.config.approval.mode ?? 'ask';
  if (mode !== 'console' && round?.canAsk) {
    const subject = `this edit of ${id}, a ${channel.name} notification`;
    return {
      kind: 'ask',
      request: { grant, via: channel.name, reasons: names, message: questionText(channel, call, why, grant, subject) },
    };
  }
  throw errors.approvalRequired(
    `This edit of ${id} needs a person's approval (${why.join('; ')}), and an edit of a posted message cannot wait for one${mode === 'ask' ? ' from a client that cannot ask (MCP elicitation)' : ' in the console'}; nothing was changed. ` +
      'Retract the post and send the new text as a new notification, which is asked like any send.',
    { via: channel.name },
  );
}

/**
 * A send held for the console: its row, `pending_approval`, carries the exact payload the
 * person will see and approve, so an approval sends those bytes and no others. Unlike a
 * refusal, this write must succeed: the caller is told the send waits, so it must be there.
 */
async function recordHeld<C, P>(
  deps: ApprovalDeps,
  channel: TypedChannel<C, P>,
  payload: P,
  grant: ApprovalGrant,
  client: string | null,
  approval: ApprovalRecord,
): Promise<void> {
  const ttlMs = deps.config.approval.ttlMs ?? DEFAULT_APPROVAL_TTL_MS;
  const approvalUntil = { ...approval, expires_at: grant.at + ttlMs };
  await deps.store.writeRecord(
    newDeliveryRecord(channel, {
      id: grant.id,
      status: 'pending_approval',
      payload,
      error_code: null,
      client,
      idempotency_key: grant.key,
      at: grant.at,
      approval: approvalUntil,
    }),
  );
}

/** The call a held send keeps for an edit and its release: what it sends, without its key or timing (`urgent` stays: quiet hours are asked at the release). */
function heldCall(call: unknown): Record<string, unknown> {
  const { idempotency_key: _key, send_at: _at, ...rest } = call as Record<string, unknown>;
  return rest;
}

/** NOTIFY_APPROVAL_TTL_S's default: a day. */
export const DEFAULT_APPROVAL_TTL_MS = 86_400_000;

/** A send a person declined, or that no one could approve: on the record, with nothing sent. */
async function recordRefusal<C, P>(
  deps: ApprovalDeps,
  channel: TypedChannel<C, P>,
  payload: P,
  grant: ApprovalGrant,
  client: string | null,
  code: 'APPROVAL_DECLINED' | 'APPROVAL_REQUIRED',
  approval: ApprovalRecord,
  call: C,
): Promise<void> {
  const now = deps.now();
  const row = newDeliveryRecord(channel, {
    id: grant.id,
    status: 'failed',
    payload,
    error_code: code,
    client,
    idempotency_key: null,
    at: now,
    approval,
  });
  // The refusal stands whatever the store says: nothing was sent either way.
  const audit = { tool: null, recipients: channel.recipients(call).map((r) => channel.recipientClass(r)) };
  await deps.store
    .writeRecord(row, { audit })
    .catch((err: unknown) => deps.log.error('approval refusal not recorded', { code, error: (err as Error).message }));
}
