/**
 * An approved send taken back before its release (Store.takeBackApproved): its outbox entry
 * cancelled and its row moved on (an edit puts it before a person again; a retract withdraws
 * it), as one transaction of two conditional writes, so a fault between them cannot leave the
 * row `approved` with nothing left to send it.
 */
import type { AuditedChange } from '../audit.js';
import type { AuditActor } from '../ports/audit.js';
import type { DeliveryAmendment, HeldRevision } from '../ports/deliveries.js';
import type { TakeBack } from '../ports/outbox.js';
import { REVISE_HELD } from './approval-writes.js';
import type { Statement } from './dialect.js';
import type { OutboxStatements } from './outbox.js';
import type { Row } from './rows.js';
import { AMEND_DELIVERY } from './statements.js';

/** One write of an all-or-nothing transaction: it must change a row, and its audit entries go with it. */
export interface AuditedStep {
  s: Statement;
  params: readonly unknown[];
  changes: (rows: Row[]) => AuditedChange[];
}

const WAITING = ['scheduled', 'held'];
const clientOf = (row: Row) => (row.client as string | null) ?? null;

export function takeBackSteps(ob: OutboxStatements, id: string, back: TakeBack, at: number, by?: AuditActor): AuditedStep[] {
  const cancel: AuditedStep = {
    s: ob.move,
    params: ['cancelled', at, id, JSON.stringify(WAITING)],
    changes: (rows) =>
      rows.map((row) => ({ write: 'outbox', id, client: clientOf(row), state: 'cancelled', at, detail: { from: WAITING }, by })),
  };
  if ('revise' in back) {
    const r: HeldRevision = { ...back.revise, from: 'approved' };
    return [
      cancel,
      {
        s: REVISE_HELD,
        params: [JSON.stringify(r.payload ?? null), JSON.stringify(r.approval), r.at, id, r.from],
        changes: (rows) => rows.map((row) => ({ write: 'revise-held', id, client: clientOf(row), revision: r })),
      },
    ];
  }
  const change: DeliveryAmendment = { ...back.amend, from: 'approved' };
  return [
    cancel,
    {
      s: AMEND_DELIVERY,
      params: [change.status, JSON.stringify(change.payload ?? null), change.provider_status, change.at, id, change.from],
      changes: (rows) => rows.map((row) => ({ write: 'amend', id, client: clientOf(row), change })),
    },
  ];
}
