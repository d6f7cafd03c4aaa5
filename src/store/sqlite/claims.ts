/**
 * SQLite's idempotency claims and approval answers (the claims port): each one immediate
 * transaction, the write lock taken before the read.
 */
import { randomUUID } from 'node:crypto';
import type { ApprovalAnswer, ClaimsPort, IdempotencyClaim, IdempotencyPhase } from '../ports/claims.js';
import type { OptOutCheck } from '../ports/contacts.js';
import * as q from '../sql/statements.js';
import type { SqliteEngine } from './engine.js';

const approvalAnswerKey = (id: string) => `approval-answer:${id}`;

interface KeyRow {
  payload_hash: string;
  state: 'pending' | 'done';
  phase: IdempotencyPhase;
  result: string | null;
  claimed_at: number;
  notification_id: string | null;
}

/** Expired idempotency rows are deleted at most this often (they already count as absent). */
const KEY_PURGE_INTERVAL_MS = 60_000;

/** The claim and the approval answer, over engine `e`. */
export function sqliteClaims(e: SqliteEngine): Pick<ClaimsPort, 'claimIdempotency' | 'answerApproval'> {
  const keyPurge = { last: 0 };
  return {
    claimIdempotency: (...a) => claimIdempotency(e, keyPurge, ...a),
    answerApproval: (...a) => answerApproval(e, ...a),
  };
}

async function claimIdempotency(
  e: SqliteEngine,
  keyPurge: { last: number },
  key: string,
  payloadHash: string,
  now: number,
  opts: { ttlMs: number; staleAfterMs: number; optOut?: OptOutCheck; notificationId?: string },
): Promise<IdempotencyClaim> {
  const tx = e.db.transaction((): IdempotencyClaim => {
    const optedOut = opts.optOut && e.firstOptedOut(opts.optOut);
    if (optedOut !== undefined) return { kind: 'opted_out', recipient: optedOut };
    if (now - keyPurge.last >= KEY_PURGE_INTERVAL_MS) {
      e.statement('DELETE FROM idempotency_keys WHERE claimed_at <= ?').run(now - opts.ttlMs);
      keyPurge.last = now;
    }
    const row = e.shared(q.CLAIM_READ).get([key]) as KeyRow | undefined;
    const expired = row === undefined || now - row.claimed_at >= opts.ttlMs;
    const free =
      expired ||
      // The owner died: same payload, pending past its budget. A different payload under
      // a stale claim stays a conflict until the key expires.
      (row.state === 'pending' && row.payload_hash === payloadHash && now - row.claimed_at >= opts.staleAfterMs);
    if (free) {
      // A taken-over claim keeps its phase: once a provider call may have started, no taker sends.
      // It keeps the id it was sending under, too; otherwise the taker sends under its own.
      const phase: IdempotencyPhase = expired ? 'claimed' : row.phase;
      const notificationId = phase === 'sending' ? row!.notification_id : (opts.notificationId ?? null);
      const owner = randomUUID();
      e.statement(
        `INSERT INTO idempotency_keys (key, payload_hash, state, result, claimed_at, owner, phase, notification_id) VALUES (?, ?, 'pending', NULL, ?, ?, ?, ?)
           ON CONFLICT (key) DO UPDATE SET payload_hash = excluded.payload_hash, state = 'pending', result = NULL,
             claimed_at = excluded.claimed_at, owner = excluded.owner, phase = excluded.phase, notification_id = excluded.notification_id`,
      ).run(key, payloadHash, now, owner, phase, notificationId);
      return notificationId === null
        ? { kind: 'claimed', owner, phase }
        : { kind: 'claimed', owner, phase, notification_id: notificationId };
    }
    if (row.state === 'pending') {
      return { kind: 'existing', payload_hash: row.payload_hash, state: 'pending', phase: row.phase, claimed_at: row.claimed_at };
    }
    return {
      kind: 'existing',
      payload_hash: row.payload_hash,
      state: 'done',
      result: row.result === null ? null : (JSON.parse(row.result) as unknown),
      claimed_at: row.claimed_at,
    };
  });
  return tx.immediate();
}

// Kept with the idempotency keys (and purged with them): a row whose payload_hash is the
// answer, under a key no scoped send key can take (those are JSON arrays).
async function answerApproval(
  e: SqliteEngine,
  id: string,
  answer: ApprovalAnswer,
  now: number,
  ttlMs: number,
): Promise<{ answer: ApprovalAnswer; first: boolean }> {
  const tx = e.db.transaction((): { answer: ApprovalAnswer; first: boolean } => {
    const key = approvalAnswerKey(id);
    const inserted = e
      .statement(
        `INSERT INTO idempotency_keys (key, payload_hash, state, result, claimed_at, owner, phase) VALUES (?, ?, 'done', NULL, ?, NULL, 'sending')
       ON CONFLICT (key) DO UPDATE SET payload_hash = excluded.payload_hash, claimed_at = excluded.claimed_at WHERE idempotency_keys.claimed_at <= ?`,
      )
      .run(key, answer, now, now - ttlMs);
    if (inserted.changes === 1) {
      e.appendAudit([{ write: 'answer', question: id, answer, at: now }]);
      return { answer, first: true };
    }
    const row = e.shared(q.CLAIM_READ).get([key]) as { payload_hash: ApprovalAnswer };
    return { answer: row.payload_hash, first: false };
  });
  return tx.immediate();
}
