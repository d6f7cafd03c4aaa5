/**
 * The soak's scheduled-send invariant (issue 24), on made-up answers and fake ledgers:
 * scheduled = sent + cancelled + expired + unknown + failed by the provider, and each of the
 * ways it can break (a send still waiting or missing, one sent twice or lost, a retract that
 * said it won but did not) is flagged by scheduledFigures.
 */
import { describe, expect, it } from 'vitest';
import { scheduledFigures, type CallRecord, type FinalRead } from '../../soak/lib/figures.mjs';

const T = Date.UTC(2026, 11, 1, 12);
const iso = (ms: number) => new Date(ms).toISOString();

/** A schedule answer for `n`, due at T + n s, and its token. */
function scheduled(n: number): CallRecord {
  return {
    kind: 'schedule',
    token: `sk0x${n}`,
    code: 'OK',
    structured: { id: `ntf_${n}`, status: 'scheduled', send_at: iso(T + n * 1000) },
  };
}
function retract(n: number, code: string, status?: string, at = T + n * 1000 - 2000): CallRecord {
  return { kind: 'retract', token: `sk0x${n}`, id: `ntf_${n}`, due: T + n * 1000, at, code, ...(status ? { structured: { status } } : {}) };
}
function final(n: number, status: string, extra: Partial<FinalRead> = {}): [string, FinalRead] {
  const sentAt = ['sent', 'retracted', 'unknown'].includes(status) ? { first_attempt_at: iso(T + n * 1000 + 300) } : {};
  return [`ntf_${n}`, { code: 'OK', status, send_at: iso(T + n * 1000), ...sentAt, ...extra }];
}

/** One run where every class occurs once and everything agrees. */
function healthy() {
  return {
    schedules: [1, 2, 3, 4, 5, 6, 7].map(scheduled),
    retracts: [
      retract(2, 'OK', 'cancelled'),
      retract(6, 'ALREADY_SENT', undefined, T + 6000 + 100),
      retract(7, 'OK', 'retracted', T + 7000 + 500),
    ],
    finals: new Map([
      final(1, 'sent'),
      final(2, 'cancelled'),
      final(3, 'expired'),
      final(4, 'unknown'),
      final(5, 'failed', { error_code: 'PROVIDER_UNAVAILABLE' }),
      final(6, 'sent'),
      final(7, 'retracted'),
    ]),
    delivered: new Map([
      ['sk0x1', 1],
      ['sk0x6', 1],
      ['sk0x7', 1],
    ]),
    deleted: new Map([['sk0x7', 1]]),
    windows: [{ label: 'store fault', from: T + 2500, to: T + 5500, mustCover: true }],
  };
}

describe('soak scheduled-send invariant (issue 24)', () => {
  it('adds every scheduled send up to sent + cancelled + expired + unknown + failed, with no break', () => {
    const { figures, breaks } = scheduledFigures(healthy());
    expect(breaks).toEqual([]);
    expect(figures.scheduled).toBe(7);
    expect(figures.final).toEqual({ sent: 3, cancelled: 1, expired: 1, unknown: 1, failed: 1, waiting: 0, other: 0 });
    expect(figures.final_by_state).toMatchObject({ sent: 2, retracted: 1 });
    expect(figures.failed_by_code).toEqual({ PROVIDER_UNAVAILABLE: 1 });
    expect(figures.invariant).toBe('scheduled 7 = sent 3 + cancelled 1 + expired 1 + unknown 1 + failed 1');
    expect(figures.retracts).toEqual({ calls: 3, within_1s_of_due: 2, answers: { cancelled: 1, ALREADY_SENT: 1, retracted: 1 } });
    expect(figures.provider).toMatchObject({
      delivered_distinct: 3,
      deleted_after_release: 1,
      duplicates: 0,
      lost: 0,
      delivered_though_not_sent: 0,
    });
    expect(figures.release_late_ms).toEqual({ releases: 4, p50: 300, p99: 300, max: 300 });
    // Due at +3, +4 and +5 s.
    expect(figures.due_in_fault_windows['store fault']).toEqual({ due: 3, expired: 1, unknown: 1, failed: 1 });
  });

  it('breaks on a send still waiting, one not found, and one failed for a reason other than its provider', () => {
    const run = healthy();
    run.finals.set('ntf_1', { code: 'OK', status: 'scheduled' });
    run.finals.set('ntf_3', { code: 'NOT_FOUND' });
    run.finals.set('ntf_5', { code: 'OK', status: 'failed', error_code: 'STORE_UNAVAILABLE' });
    run.delivered.delete('sk0x1');
    const { figures, breaks } = scheduledFigures(run);
    expect(figures.final).toMatchObject({ sent: 2, waiting: 1, other: 2, expired: 0, failed: 0 });
    expect(figures.invariant).toContain('BROKEN: 3 unaccounted');
    expect(breaks).toHaveLength(1);
    expect(breaks[0]).toMatch(
      /^scheduled 7 != .*3 not accounted for \(e\.g\. ntf_1: scheduled, ntf_3: missing, ntf_5: failed STORE_UNAVAILABLE\)/,
    );
  });

  it('breaks on a send delivered twice, one read sent but never delivered, and one cancelled that was delivered', () => {
    const run = healthy();
    run.delivered.set('sk0x1', 2);
    run.delivered.delete('sk0x6');
    run.delivered.set('sk0x3', 1);
    const { breaks } = scheduledFigures(run);
    expect(breaks).toEqual([
      expect.stringMatching(/^1 scheduled sends reached a provider more than once \(e\.g\. ntf_1\)/),
      expect.stringMatching(/^1 scheduled sends read sent never reached a provider \(e\.g\. ntf_6\)/),
      expect.stringMatching(/^1 scheduled sends read cancelled, expired or failed reached a provider \(e\.g\. ntf_3: expired\)/),
    ]);
  });

  it('breaks when a retract said it won but the send left, or said it lost but the send was cancelled', () => {
    const run = healthy();
    run.finals.set('ntf_2', final(2, 'sent')[1]);
    run.delivered.set('sk0x2', 1);
    run.finals.set('ntf_6', final(6, 'cancelled')[1]);
    run.delivered.delete('sk0x6');
    const { breaks } = scheduledFigures(run);
    expect(breaks).toEqual([
      expect.stringMatching(
        /^1 retracts answered cancelled but the send did not end cancelled and unsent \(e\.g\. ntf_2: sent, delivered 1\)/,
      ),
      expect.stringMatching(/^1 retracts answered ALREADY_SENT but the send ended cancelled or expired/),
      expect.stringMatching(/^1 scheduled sends ended cancelled though no retract of them won \(e\.g\. ntf_6\)/),
    ]);
  });

  it('takes a cancel whose retract lost its answer to a fault, but not one nobody asked for', () => {
    const run = healthy();
    run.retracts[0] = retract(2, 'STORE_UNAVAILABLE');
    expect(scheduledFigures(run).breaks).toEqual([]);
    run.retracts.splice(0, 1);
    expect(scheduledFigures(run).breaks).toEqual([
      expect.stringMatching(/^1 scheduled sends ended cancelled though no retract of them won \(e\.g\. ntf_2\)/),
    ]);
  });

  it('breaks on two ids for one keyed send, a delivery nothing scheduled, and a fault no send fell due in', () => {
    const run = healthy();
    run.schedules.push({ ...scheduled(1), structured: { id: 'ntf_1b', status: 'scheduled', send_at: iso(T + 1000) } });
    run.finals.set('ntf_1b', final(1, 'sent')[1]);
    run.schedules.push({ kind: 'schedule', token: 'sk0x9', code: 'STORE_UNAVAILABLE' });
    run.delivered.set('sk0x9', 1);
    run.windows.push({ label: 'disk full', from: T + 60_000, to: T + 65_000, mustCover: true });
    const { breaks } = scheduledFigures(run);
    expect(breaks).toEqual([
      expect.stringMatching(/^1 keyed scheduled sends sent twice at once got two ids \(e\.g\. sk0x1\)/),
      expect.stringMatching(
        /^1 sends with send_at reached a provider though no call was answered scheduled \(e\.g\. sk0x9: STORE_UNAVAILABLE\)/,
      ),
      expect.stringMatching(/^no scheduled send fell due during "disk full"/),
    ]);
  });
});
