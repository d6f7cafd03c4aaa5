import { describe, expect, it } from 'vitest';
import { NOTIFICATION_STATES, RECEIPT_EVENTS, type DeliveryStatus, type ReceiptEvent } from '../store/types.js';
import { advance, decide, statesTaking, type Decision } from './status.js';

/**
 * Every state against every receipt, written out by hand (not derived from the table under
 * test): `-` is a refusal, anything else the next state.
 */
const EXPECTED: Record<DeliveryStatus, Record<ReceiptEvent, DeliveryStatus | '-'>> = {
  //            queued     sent     delivered     undelivered     failed
  dry_run: { queued: '-', sent: '-', delivered: '-', undelivered: '-', failed: '-' },
  unknown: { queued: 'queued', sent: 'sent', delivered: 'delivered', undelivered: 'undelivered', failed: 'failed' },
  queued: { queued: 'queued', sent: 'sent', delivered: 'delivered', undelivered: 'undelivered', failed: 'failed' },
  sent: { queued: '-', sent: 'sent', delivered: 'delivered', undelivered: 'undelivered', failed: 'failed' },
  delivered: { queued: '-', sent: '-', delivered: '-', undelivered: '-', failed: '-' },
  undelivered: { queued: '-', sent: '-', delivered: '-', undelivered: '-', failed: '-' },
  failed: { queued: '-', sent: '-', delivered: '-', undelivered: '-', failed: '-' },
  scheduled: { queued: '-', sent: '-', delivered: '-', undelivered: '-', failed: '-' },
  held: { queued: '-', sent: '-', delivered: '-', undelivered: '-', failed: '-' },
  cancelled: { queued: '-', sent: '-', delivered: '-', undelivered: '-', failed: '-' },
  pending_approval: { queued: '-', sent: '-', delivered: '-', undelivered: '-', failed: '-' },
  approved: { queued: '-', sent: '-', delivered: '-', undelivered: '-', failed: '-' },
  declined: { queued: '-', sent: '-', delivered: '-', undelivered: '-', failed: '-' },
  expired: { queued: '-', sent: '-', delivered: '-', undelivered: '-', failed: '-' },
  retracted: { queued: '-', sent: '-', delivered: '-', undelivered: '-', failed: '-' },
};
const NEVER_SENT = ['scheduled', 'held', 'cancelled', 'expired', 'pending_approval', 'approved', 'declined'];

describe('advance: the transition table', () => {
  it('covers every state and every receipt', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...NOTIFICATION_STATES].sort());
  });

  for (const state of NOTIFICATION_STATES) {
    for (const event of RECEIPT_EVENTS) {
      const want = EXPECTED[state][event];
      it(`${state} + ${event} receipt → ${want === '-' ? 'refused' : want}`, () => {
        const got = advance(state, event);
        if (want === '-') {
          expect(got.ok).toBe(false);
          if (!got.ok)
            expect(got.reason).toMatch(
              state === 'dry_run' || NEVER_SENT.includes(state)
                ? /never sent/
                : new RegExp(`^${state} (is final|does not go back to ${event})$`),
            );
        } else {
          expect(got).toEqual({ ok: true, next: want });
        }
      });
    }
  }

  it('a waiting send is released, cancelled or expired from scheduled or held, and from nothing else', () => {
    expect(statesTaking('cancel').sort()).toEqual(['held', 'scheduled']);
    expect(statesTaking('release').sort()).toEqual(['held', 'scheduled']);
    expect(statesTaking('expire').sort()).toEqual(['held', 'scheduled']);
  });

  it("takes a caller's edit of a standing post, and its retraction once; nothing after", () => {
    expect(advance('sent', 'edited')).toEqual({ ok: true, next: 'sent' });
    expect(advance('dry_run', 'edited')).toEqual({ ok: true, next: 'dry_run' });
    expect(advance('sent', 'retracted')).toEqual({ ok: true, next: 'retracted' });
    expect(advance('dry_run', 'retracted')).toEqual({ ok: true, next: 'retracted' });
    for (const state of ['retracted', 'failed', 'unknown', 'delivered'] as const) {
      expect(advance(state, 'edited').ok, state).toBe(false);
      expect(advance(state, 'retracted').ok, state).toBe(false);
    }
  });

  it('never moves a notification backwards: a late sent after delivered, delivered to sent', () => {
    expect(advance('delivered', 'sent')).toEqual({ ok: false, reason: 'delivered is final' });
    expect(advance('sent', 'queued')).toEqual({ ok: false, reason: 'sent does not go back to queued' });
  });
});

describe('decide: a console decision on a held send', () => {
  it('takes only pending_approval, each decision to its own state, once', () => {
    const decisions: Decision[] = ['approve', 'decline', 'expire'];
    for (const state of NOTIFICATION_STATES) {
      for (const d of decisions) {
        const r = decide(state, d);
        if (state === 'pending_approval')
          expect(r).toEqual({ ok: true, next: { approve: 'approved', decline: 'declined', expire: 'expired' }[d] });
        else expect(r.ok).toBe(false);
      }
    }
    expect(decide('approved', 'approve')).toEqual({ ok: false, reason: 'it was approved already' });
    expect(decide('sent', 'decline')).toEqual({ ok: false, reason: 'it is sent, not waiting for approval' });
  });
});
