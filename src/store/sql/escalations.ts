/**
 * Escalation steps in the outbox (DESIGN section 11), written once over a Dialect: the steps
 * of a first send, and their cancel, which a retract or the console runs alone and an answer
 * runs in its own transaction (./answers.ts), so no step is claimed after the answer committed.
 */
import type { AuditedChange } from '../audit.js';
import type { AuditActor } from '../ports/audit.js';
import type { OutboxPort } from '../ports/outbox.js';
import { statement, type Dialect, type Statement } from './dialect.js';
import { OUTBOX_INSERT, outboxFromRow, outboxValues } from './outbox.js';
import { INSERT_QUESTION, INSERT_TOKEN } from './question-inserts.js';
import type { Row } from './rows.js';

/** A statement and its parameters, one of several run in one transaction. */
export interface Step {
  s: Statement;
  params: readonly unknown[];
}

/** Runs statements in order in one transaction, appending the audit entries of what they changed (each engine's). */
export type AuditedAll = (steps: readonly Step[], changes: (rows: Row[][]) => AuditedChange[]) => Promise<Row[][]>;

const INSERT_STEP = statement('escalation-step-insert', OUTBOX_INSERT);
const STEPS = statement('escalation-steps', 'SELECT * FROM outbox WHERE escalates = $1 ORDER BY due_at, id');
/** Only steps still waiting: one a release claimed has left (or is leaving) and stays its release's. */
export const CANCEL_STEPS = statement(
  'cancel-escalation',
  `UPDATE outbox SET state = 'cancelled', finished_at = $2 WHERE escalates = $1 AND state IN ('scheduled', 'held') RETURNING id, client`,
);

/** The audit entries of the steps CANCEL_STEPS moved. */
export function stepsCancelled(rows: readonly Row[], rootId: string, now: number, why: string, by?: AuditActor): AuditedChange[] {
  return rows.map((r) => ({
    write: 'outbox',
    id: r.id as string,
    client: (r.client as string | null) ?? null,
    state: 'cancelled',
    at: now,
    detail: { escalates: rootId, why },
    by,
  }));
}

export function sqlEscalations(
  sql: Dialect,
  auditedAll: AuditedAll,
): Pick<OutboxPort, 'escalationSteps' | 'scheduleEscalation' | 'cancelEscalation'> {
  return {
    async escalationSteps(rootId) {
      return (await sql.all(STEPS, [rootId])).map(outboxFromRow);
    },
    async scheduleEscalation(q, tokens, steps) {
      const rows = await auditedAll(
        [
          { s: INSERT_QUESTION, params: [q.notification_id, q.prompt, JSON.stringify(q.choices), q.expires_in_s, q.created_at, q.client] },
          ...tokens.map((t) => ({ s: INSERT_TOKEN, params: [t.sha256, q.notification_id, t.recipient, t.sent_in ?? null] })),
          ...steps.map((e) => ({ s: INSERT_STEP, params: outboxValues(e) })),
        ],
        (written) =>
          written
            .slice(1 + tokens.length)
            .flatMap((added, i) => (added.length === 1 ? [{ write: 'schedule' as const, entry: steps[i]! }] : [])),
      );
      return rows.slice(1 + tokens.length).flatMap((added) => added.map((r) => r.id as string));
    },
    async cancelEscalation(rootId, now, by) {
      const [rows] = await auditedAll([{ s: CANCEL_STEPS, params: [rootId, now] }], ([moved]) =>
        stepsCancelled(moved!, rootId, now, by?.tool === 'retract_notification' ? 'retracted' : 'stopped', by),
      );
      return rows!.map((r) => r.id as string);
    },
  };
}
