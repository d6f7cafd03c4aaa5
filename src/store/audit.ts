/**
 * The hash-chained audit log (DESIGN section 10), the part both engines share: what an entry
 * is, its hash, the entries a write appends, and the verification of a chain. Each engine
 * appends with its own `appendAudit` inside the transaction of the write described
 * (src/store/sqlite/store.ts, src/store/postgres/store.ts), so an entry and its write commit
 * together or not at all. No body or address is kept: digests, and recipient classes
 * (`@example.com`, `+14…`) as the logs have them.
 */
import { hash as oneShotHash } from 'node:crypto';
import type {
  ApprovalAnswer,
  AuditActor,
  AuditContext,
  AuditEntry,
  AuditHead,
  AuditInput,
  DeliveryAmendment,
  DeliveryDecision,
  DeliveryRecord,
  DeliveryStatusChange,
  HeldRevision,
  OutboxEntry,
  OutboxState,
  Store,
} from './types.js';
import { storedCall } from './sql/outbox.js';

export type { AuditActor, AuditContext, AuditEntry, AuditHead, AuditInput } from './types.js';

export const GENESIS = '0'.repeat(64);
/** The kind of the entry a prune appends. */
export const PRUNED = 'pruned';

// The one-shot hash (Node >= 20.12): half the cost of createHash per entry, which verify pays a million times.
const sha256 = (text: string): string => oneShotHash('sha256', text, 'hex');

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
 * saw), the exact provider request when the provider was called (the payload as recorded:
 * for email the MIME bytes and the envelope, bcc included), and the outcome, which binds
 * the payload's digest too, so a dry run's entry names what it would have sent.
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
  if (r.attempts > 0) out.push(entry('request', payload));
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
    case 'schedule': {
      const e = c.entry;
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
      return [
        {
          at: e.created_at,
          client: e.client,
          tool: c.ctx?.tool ?? null,
          notification_id: e.id,
          kind: `outbox.${e.state}`,
          digest,
          recipients: classes(c.ctx),
        },
      ];
    }
    case 'outbox':
      return [
        {
          at: c.at,
          client: c.by ? c.by.client : c.client,
          tool: c.by?.tool ?? null,
          notification_id: c.id,
          kind: `outbox.${c.state}`,
          digest: digestOf({ id: c.id, state: c.state, at: c.at, detail: c.detail }),
          recipients: null,
        },
      ];
    case 'decision': {
      const { status, approval, at } = c.decision;
      // Who decided (null: the clock), when, why, and the payload they were shown.
      const decided = {
        id: c.id,
        status,
        decided_by: approval.decided_by ?? null,
        decided_at: approval.decided_at ?? at,
        reason: approval.reason ?? null,
        payload_sha256: approval.payload_sha256,
      };
      return [
        {
          at,
          client: approval.decided_by ?? null,
          tool: null,
          notification_id: c.id,
          kind: `decision.${status}`,
          digest: digestOf(decided),
          recipients: null,
        },
      ];
    }
    case 'amend': {
      const { change } = c;
      // An edit binds the new exact request; a retraction (a post deleted, a dry run or a held send withdrawn) what it took back.
      const edit = change.provider_status === 'edited';
      const digest = edit
        ? digestOf(change.payload)
        : digestOf({
            id: c.id,
            status: change.status,
            provider_status: change.provider_status,
            at: change.at,
            payload: digestOf(change.payload),
          });
      const client = change.by !== undefined ? change.by.client : c.client;
      return [
        {
          at: change.at,
          client,
          tool: change.by?.tool ?? null,
          notification_id: c.id,
          kind: edit ? 'edit' : 'retract',
          digest,
          recipients: null,
        },
      ];
    }
    case 'edit-waiting':
      return [
        {
          at: c.at,
          client: c.client,
          tool: 'edit_notification',
          notification_id: c.id,
          kind: 'edit',
          digest: digestOf(c.call),
          recipients: null,
        },
      ];
    case 'revise-held': {
      const { payload, approval, at } = c.revision;
      return [
        {
          at,
          client: c.client,
          tool: 'edit_notification',
          notification_id: c.id,
          kind: 'edit',
          digest: digestOf({ payload: digestOf(payload), payload_sha256: approval.payload_sha256, status: 'pending_approval' }),
          recipients: null,
        },
      ];
    }
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

export type AuditVerdict =
  | { ok: true; count: number; head: AuditHead }
  | { ok: false; count: number; seq: number; problem: 'changed' | 'removed' | 'inserted' | 'reordered'; message: string };

/**
 * Checks a chain read in seq order against its head. Each entry must come next in seq,
 * follow the hash of the one before, and hash to its own hash; the last must be the head.
 * A break is named by what explains it: a seq gap or an unknown link is an entry removed;
 * an entry linking to the one two back is one inserted before it; a link to an entry that
 * comes later is a reordering; content that no longer hashes to its hash is a change.
 */
export async function verifyChain(head: AuditHead, entries: AsyncIterable<AuditEntry[]>): Promise<AuditVerdict> {
  let count = 0;
  let prevHash = head.anchor_hash;
  let prevPrev: string | null = null;
  let expected = head.anchor_seq + 1;
  let pending: AuditEntry[] = [];
  const attest = anchorDigest(head.anchor_seq, head.anchor_hash);
  let attested = false;
  const fail = (seq: number, problem: Exclude<AuditVerdict, { ok: true }>['problem'], message: string): AuditVerdict => ({
    ok: false,
    count,
    seq,
    problem,
    message,
  });
  const iterator = entries[Symbol.asyncIterator]();
  let page = await iterator.next();
  while (!page.done) {
    pending = page.value;
    for (let i = 0; i < pending.length; i++) {
      const e = pending[i]!;
      if (e.seq < expected)
        return fail(
          e.seq,
          'inserted',
          `entry ${e.seq} was inserted: the chain ${e.seq <= head.anchor_seq ? `starts after ${head.anchor_seq}` : `has ${e.seq} already`}`,
        );
      if (e.prev !== prevHash) {
        // What follows, across the page's end too, tells an insertion or a reordering from a change.
        const ahead = pending.slice(i + 1);
        if (ahead.length < 2) {
          const more = await iterator.next();
          if (!more.done) ahead.push(...more.value);
        }
        const next = ahead[0];
        if (prevPrev !== null && e.prev === prevPrev)
          return fail(expected - 1, 'inserted', `entry ${expected - 1} was inserted: entry ${e.seq} follows the entry before it`);
        if (ahead.some((later) => later.hash === e.prev))
          return fail(e.seq, 'reordered', `entry ${e.seq} is out of order: it follows an entry that comes after it`);
        if (next?.prev === prevHash || e.seq > head.seq)
          return fail(e.seq, 'inserted', `entry ${e.seq} was inserted: it does not follow entry ${expected - 1}`);
        if (e.seq > expected)
          return fail(expected, 'removed', `entry ${expected} was removed (the chain goes from ${expected - 1} to ${e.seq})`);
        // Renumbered to close the gap: the entry still hashes as it did under its old seq.
        for (let k = 1; k <= 64; k++) {
          if (entryHash({ ...e, seq: e.seq + k }) === e.hash)
            return fail(
              expected,
              'removed',
              `entry ${expected} was removed, and those after it renumbered (entry ${e.seq} was ${e.seq + k})`,
            );
        }
        if (expected - 1 === head.anchor_seq)
          return fail(e.seq, 'changed', `entry ${e.seq} was changed: it no longer follows the chain's anchor`);
        return fail(expected - 1, 'changed', `entry ${expected - 1} was changed: entry ${e.seq} no longer follows it`);
      }
      if (e.seq !== expected) {
        return e.seq > expected
          ? fail(expected, 'removed', `entry ${expected} was removed (the chain goes from ${expected - 1} to ${e.seq})`)
          : fail(e.seq, 'inserted', `entry ${e.seq} was inserted before entry ${expected}`);
      }
      if (entryHash(e) !== e.hash) return fail(e.seq, 'changed', `entry ${e.seq} was changed: its content no longer matches its hash`);
      if (e.kind === PRUNED && e.digest === attest) attested = true;
      prevPrev = prevHash;
      prevHash = e.hash;
      expected++;
      count++;
    }
    page = await iterator.next();
  }
  const last = expected - 1;
  if (last < head.seq)
    return fail(last + 1, 'removed', `entry ${last + 1} was removed: the chain ends at ${last}, its head at ${head.seq}`);
  if (last > head.seq) return fail(head.seq + 1, 'inserted', `entry ${head.seq + 1} was inserted after the head (${head.seq})`);
  if (prevHash !== head.hash) return fail(last, 'changed', `entry ${last} was changed: it no longer matches the chain's head`);
  if (!attested && !atGenesis(head)) return unattested(head);
  return { ok: true, count, head };
}

const atGenesis = (head: AuditHead): boolean => head.anchor_seq === 0 && head.anchor_hash === GENESIS;

/** The chain verifies from an anchor that no prune entry names: entries before it were deleted, and the anchor moved, by hand. The break is at the chain's start: nothing before it verified. */
function unattested(head: AuditHead): AuditVerdict {
  return {
    ok: false,
    count: 0,
    seq: head.anchor_seq,
    problem: 'removed',
    message: `entries up to ${head.anchor_seq} were removed: the chain starts after them, but no 'pruned' entry names that anchor (a prune writes one)`,
  };
}

/**
 * Verifies a store's chain, read in pages. Entries appended while it reads (a live server)
 * are past the head it read first: they are left for the next run, unless the head read
 * again does not cover them either, which only an entry inserted by hand explains.
 */
export async function verifyAudit(
  store: Pick<Store, 'auditHead' | 'auditEntries'> & Partial<Pick<Store, 'auditLines'>>,
  pageSize = 10_000,
): Promise<AuditVerdict> {
  const intact = store.auditLines ? await verifyLines(store as Pick<Store, 'auditHead' | 'auditLines'>, pageSize) : undefined;
  return intact ?? verifyEntries(store, pageSize);
}

const QUOTE = 34;
const COMMA = 44;
const BRACKET = 93;
const SPACE = 32;

/**
 * The common case, fast: a chain that is intact, read as the engine's lines (AuditLines), each
 * checked for its seq, its link (the JSON's last item is `"<prev>"`) and its hash. Undefined at
 * the first thing that is not exactly as it should be (a break, or merely a row the engine
 * formats otherwise than JSON.stringify): verifyEntries then reads entry by entry and names it.
 */
async function verifyLines(store: Pick<Store, 'auditHead' | 'auditLines'>, pageSize: number): Promise<AuditVerdict | undefined> {
  const head = await store.auditHead();
  let prev = head.anchor_hash;
  let expected = head.anchor_seq + 1;
  let after = Number.MIN_SAFE_INTEGER;
  // Kind then digest, as entryHash's array has them; `,"` never occurs inside a JSON string, so this is that entry's.
  const attest = `,"${PRUNED}","${anchorDigest(head.anchor_seq, head.anchor_hash)}",`;
  let attested = atGenesis(head);
  for (;;) {
    const page = await store.auditLines(after, pageSize);
    const { text } = page;
    if (!attested && text.includes(attest)) attested = true;
    let start = 0;
    for (let i = 0; i < page.n; i++) {
      const newline = text.indexOf('\n', start);
      const end = newline < 0 ? text.length : newline;
      const jsonEnd = end - 65;
      if (jsonEnd <= start || text.charCodeAt(jsonEnd) !== SPACE) return undefined;
      const seq = Number(text.slice(start + 1, text.indexOf(',', start)));
      if (seq > head.seq) {
        // Appended after the head was read (a live server), unless the head now does not cover it either.
        if (expected - 1 !== head.seq || prev !== head.hash || !attested || seq > (await store.auditHead()).seq) return undefined;
        return { ok: true, count: head.seq - head.anchor_seq, head };
      }
      if (seq !== expected || text.charCodeAt(start) !== 91) return undefined;
      // `,"<prev>"]`: an unescaped quote after the comma opens the last item, so it is exactly prev.
      if (
        text.charCodeAt(jsonEnd - 1) !== BRACKET ||
        text.charCodeAt(jsonEnd - 2) !== QUOTE ||
        text.charCodeAt(jsonEnd - 67) !== QUOTE ||
        text.charCodeAt(jsonEnd - 68) !== COMMA
      )
        return undefined;
      if (!text.startsWith(prev, jsonEnd - 66)) return undefined;
      const hash = text.slice(jsonEnd + 1, end);
      if (sha256(text.slice(start, jsonEnd)) !== hash) return undefined;
      prev = hash;
      expected++;
      start = end + 1;
    }
    if (page.n < pageSize || page.last === null) break;
    after = page.last;
  }
  if (expected - 1 !== head.seq || prev !== head.hash || !attested) return undefined;
  return { ok: true, count: head.seq - head.anchor_seq, head };
}

/** Entry by entry: what names a break (and the path for a store without auditLines). */
async function verifyEntries(store: Pick<Store, 'auditHead' | 'auditEntries'>, pageSize: number): Promise<AuditVerdict> {
  const head = await store.auditHead();
  let beyond: AuditEntry | undefined;
  async function* pages(): AsyncGenerator<AuditEntry[]> {
    // From the lowest seq, not the anchor: an entry slipped in before the anchor is found too.
    let after = Number.MIN_SAFE_INTEGER;
    for (;;) {
      const page = await store.auditEntries({ afterSeq: after, limit: pageSize });
      if (page.length === 0) return;
      const within = page[page.length - 1]!.seq <= head.seq ? page : page.filter((e) => e.seq <= head.seq);
      if (within.length > 0) yield within;
      if (within.length < page.length) {
        beyond = page[within.length];
        return;
      }
      after = page[page.length - 1]!.seq;
    }
  }
  const verdict = await verifyChain(head, pages());
  if (!verdict.ok || beyond === undefined) return verdict;
  const now = await store.auditHead();
  if (beyond.seq > now.seq)
    return {
      ok: false,
      count: verdict.count,
      seq: beyond.seq,
      problem: 'inserted',
      message: `entry ${beyond.seq} was inserted after the head (${now.seq})`,
    };
  return verdict;
}
