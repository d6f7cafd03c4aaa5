/**
 * Verifying the audit chain (DESIGN section 10): a chain read in seq order against its head
 * (verifyChain, which names a break), and a store's chain read fast as lines first
 * (verifyAudit). ./audit.ts says what an entry is and how it hashes.
 */
import { anchorDigest, entryHash, GENESIS, PRUNED, sha256 } from './audit.js';
import type { AuditEntry, AuditHead, AuditPort } from './ports/audit.js';

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
  store: Pick<AuditPort, 'auditHead' | 'auditEntries'> & Partial<Pick<AuditPort, 'auditLines'>>,
  pageSize = 10_000,
): Promise<AuditVerdict> {
  const intact = store.auditLines ? await verifyLines(store as Pick<AuditPort, 'auditHead' | 'auditLines'>, pageSize) : undefined;
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
async function verifyLines(store: Pick<AuditPort, 'auditHead' | 'auditLines'>, pageSize: number): Promise<AuditVerdict | undefined> {
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
async function verifyEntries(store: Pick<AuditPort, 'auditHead' | 'auditEntries'>, pageSize: number): Promise<AuditVerdict> {
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
