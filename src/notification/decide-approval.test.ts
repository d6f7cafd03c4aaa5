/**
 * Sends held for the console (NOTIFY_APPROVAL_MODE), through the pipeline with a counting fake
 * provider, a real SQLite store and a clock of our own: which mode holds which client's send,
 * that an approval sends the stored payload exactly once under the held id, that a decline,
 * the TTL, a stale hash or a second decision send nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeProvider, failure as refusal, openTempStore, pipelineDeps, SMS_ENV } from '../../test/helpers/pipeline-kit.js';
import type { Config } from '../config/config.js';
import type { NotifyError } from '../core/errors.js';
import type { SqliteStore } from '../store/sqlite/store.js';
import { isApprovalAsk, payloadSha256 } from './approval.js';
import { decideApproval, expireAwaitingApproval } from './decide-approval.js';
import { releaseDue } from './outbox.js';
import { sendNotification, sendOrAsk, type PipelineDeps, type SendResult } from './pipeline.js';

let store: SqliteStore;
let provider: FakeProvider;
let clock: number;

const deps = (
  mode: string,
  env: Record<string, string> = {},
  gates: { rateGate?: boolean; capGate?: boolean } = {},
): Promise<PipelineDeps & { config: Config }> =>
  pipelineDeps({
    store,
    providers: { sms: provider },
    env: { ...SMS_ENV, NOTIFY_APPROVAL: 'sms', NOTIFY_APPROVAL_MODE: mode, NOTIFY_APPROVAL_TTL_S: '60', ...env },
    now: () => clock,
    ...gates,
  });

const SMS = { via: 'sms', to: '+14155550123', body: 'Disk full' };
const ask = (d: PipelineDeps, call: Record<string, unknown>, canAsk: boolean) =>
  sendOrAsk(d, 'sms', call, { client: 'bot', approval: { canAsk } });
/** A send whose answer is not a question. */
async function send(d: PipelineDeps, call: Record<string, unknown>, canAsk: boolean): Promise<SendResult> {
  const answer = await ask(d, call, canAsk);
  if (isApprovalAsk(answer)) throw new Error('a person was asked');
  return answer;
}

beforeEach(async () => {
  store = await openTempStore('held');
  provider = new FakeProvider();
  clock = Date.UTC(2026, 5, 1);
});
afterEach(async () => store.close());

describe('sends held for the console', () => {
  it("console holds every client's send; ask-then-console holds only a client that cannot ask; ask never holds", async () => {
    const consoleMode = await deps('console');
    for (const canAsk of [true, false]) {
      const held = await send(consoleMode, SMS, canAsk);
      expect(held).toMatchObject({ via: 'sms', status: 'pending_approval', accepted_at: new Date(clock).toISOString() });
      expect((await store.getDelivery(held.id))!).toMatchObject({
        status: 'pending_approval',
        client: 'bot',
        attempts: 0,
        approval: { outcome: 'pending', reasons: ['sms'], recipients: ['+14155550123'], expires_at: clock + 60_000 },
      });
    }
    const hybrid = await deps('ask-then-console');
    expect((await send(hybrid, SMS, false)).status).toBe('pending_approval');
    expect(await ask(hybrid, SMS, true)).toMatchObject({ kind: 'ask' });
    const askMode = await deps('ask');
    expect((await refusal(send(askMode, SMS, false))).code).toBe('APPROVAL_REQUIRED');
    expect(provider.payloads).toEqual([]);
  });

  it('approves once: the stored payload leaves under the held id, the decision is recorded, a second decision sends nothing', async () => {
    const d = await deps('console');
    const held = await send(d, SMS, false);
    const row = (await store.getDelivery(held.id))!;
    const sha = row.approval!.payload_sha256;
    expect(sha).toBe(payloadSha256(row.payload));
    clock += 1_000;
    const decided = await decideApproval(d, held.id, { decision: 'approve', by: 'ops', seenSha256: sha, reason: 'on call knows' });
    expect(decided.status).toBe('approved');
    expect(provider.payloads).toEqual([row.payload]);
    expect((await store.getDelivery(held.id))!).toMatchObject({
      status: 'sent',
      provider_message_id: 'fake-1',
      attempts: 1,
      approval: { outcome: 'approved', decided_by: 'ops', decided_at: clock, reason: 'on call knows', payload_sha256: sha },
    });
    for (const decision of ['approve', 'decline'] as const) {
      const again = await refusal(decideApproval(d, held.id, { decision, by: 'ops', seenSha256: sha }));
      expect(again.code).toBe('INVALID_FIELD');
      expect(again.message).toContain('it is sent, not waiting for approval');
    }
    expect(provider.payloads).toHaveLength(1);
  });

  it('of two approvals racing, one sends', async () => {
    const d = await deps('console');
    const held = await send(d, SMS, false);
    const sha = (await store.getDelivery(held.id))!.approval!.payload_sha256;
    const both = await Promise.allSettled([
      decideApproval(d, held.id, { decision: 'approve', by: 'ops', seenSha256: sha }),
      decideApproval(d, held.id, { decision: 'approve', by: 'lead', seenSha256: sha }),
    ]);
    expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(provider.payloads).toHaveLength(1);
  });

  it("refuses a decision on a hash other than the stored payload's, and a decline sends nothing", async () => {
    const d = await deps('console');
    const held = await send(d, SMS, false);
    const stale = await refusal(decideApproval(d, held.id, { decision: 'approve', by: 'ops', seenSha256: '0'.repeat(64) }));
    expect(stale.code).toBe('APPROVAL_REQUIRED');
    expect((await store.getDelivery(held.id))!.status).toBe('pending_approval');
    const sha = (await store.getDelivery(held.id))!.approval!.payload_sha256;
    expect((await decideApproval(d, held.id, { decision: 'decline', by: 'ops', seenSha256: sha, reason: 'not now' })).status).toBe(
      'declined',
    );
    expect((await store.getDelivery(held.id))!).toMatchObject({
      status: 'declined',
      approval: { outcome: 'declined', decided_by: 'ops', reason: 'not now' },
    });
    expect(provider.payloads).toEqual([]);
    expect((await refusal(decideApproval(d, 'ntf_nope', { decision: 'approve', by: 'ops', seenSha256: sha }))).code).toBe('NOT_FOUND');
  });

  it("checks opt-outs and the client's rate limit again at the approval, and sends nothing when either refuses", async () => {
    const d = await deps('console', { NOTIFY_RATE_LIMITS: 'sms=1/h', NOTIFY_APPROVAL_TTL_S: '86400' }, { rateGate: true });
    const first = await send(d, SMS, false);
    const second = await send(d, { ...SMS, body: 'Disk fuller' }, false);
    const sha = async (id: string) => (await store.getDelivery(id))!.approval!.payload_sha256;
    expect((await decideApproval(d, first.id, { decision: 'approve', by: 'ops', seenSha256: await sha(first.id) })).status).toBe(
      'approved',
    );
    expect((await refusal(decideApproval(d, second.id, { decision: 'approve', by: 'ops', seenSha256: await sha(second.id) }))).code).toBe(
      'RATE_LIMITED',
    );
    await store.addOptOut('sms', '+14155550123', clock);
    clock += 3_600_000 - 1_000;
    const third = await send(d, { ...SMS, body: 'Disk fullest' }, false).catch((e: unknown) => e);
    // A new send to an opted-out number is refused before it is held; the one already held is refused at its approval.
    expect((third as NotifyError).code).toBe('RECIPIENT_OPTED_OUT');
    expect((await refusal(decideApproval(d, second.id, { decision: 'approve', by: 'ops', seenSha256: await sha(second.id) }))).code).toBe(
      'RECIPIENT_OPTED_OUT',
    );
    expect((await store.getDelivery(second.id))!.status).toBe('pending_approval');
    expect(provider.payloads).toHaveLength(1);
  });

  it('expires after NOTIFY_APPROVAL_TTL_S: an approval then sends nothing, and the sweep ends the rest', async () => {
    const d = await deps('console');
    const first = await send(d, SMS, false);
    const second = await send(d, { ...SMS, body: 'Disk fuller' }, false);
    const sha = (await store.getDelivery(first.id))!.approval!.payload_sha256;
    clock += 60_000;
    const late = await refusal(decideApproval(d, first.id, { decision: 'approve', by: 'ops', seenSha256: sha }));
    expect(late.message).toContain('expired');
    expect((await store.getDelivery(first.id))!).toMatchObject({ status: 'expired', approval: { outcome: 'expired' } });
    expect(await expireAwaitingApproval(d)).toBe(1);
    expect((await store.getDelivery(second.id))!.status).toBe('expired');
    expect(provider.payloads).toEqual([]);
  });

  it('a keyed held send replays its pending answer to the same call, and holds nothing twice', async () => {
    const d = await deps('console');
    const keyed = { ...SMS, idempotency_key: 'disk-1' };
    const held = await send(d, keyed, false);
    const again = await send(d, keyed, false);
    expect(again).toMatchObject({ id: held.id, status: 'pending_approval', replayed: true });
    expect(await store.findDeliveries({ status: 'pending_approval', limit: 10 })).toHaveLength(1);
  });

  it('an approved release meets the allowlist, quiet hours and caps as it leaves, as a scheduled release does', async () => {
    const d = await deps('console', { NOTIFY_APPROVAL_TTL_S: '86400' });
    const held = [
      await send(d, SMS, false),
      await send(d, { ...SMS, body: 'Disk fuller' }, false),
      await send(d, { ...SMS, body: 'Disk fullest' }, false),
    ];
    const sha = async (id: string) => (await store.getDelivery(id))!.approval!.payload_sha256;
    const approve = async (dd: PipelineDeps, id: string) =>
      decideApproval(dd, id, { decision: 'approve', by: 'ops', seenSha256: await sha(id) });

    // The server restarted with the number taken off the allowlist: the approval cannot send it.
    const narrowed = await deps('console', { NOTIFY_SMS_ALLOW: '+44', NOTIFY_APPROVAL_TTL_S: '86400' });
    expect(await approve(narrowed, held[0]!.id)).toMatchObject({
      status: 'approved',
      released: { id: held[0]!.id, state: 'failed', code: 'RECIPIENT_NOT_ALLOWED' },
      record: { status: 'failed', error_code: 'RECIPIENT_NOT_ALLOWED' },
    });

    // Quiet hours hold the approved send until they end, then it leaves.
    const quiet = await deps(
      'console',
      { NOTIFY_QUIET_HOURS: 'sms=00:00-06:00@UTC', NOTIFY_CAPS: '*:sms=1/day', NOTIFY_APPROVAL_TTL_S: '86400' },
      { capGate: true },
    );
    expect(await approve(quiet, held[1]!.id)).toMatchObject({ released: { id: held[1]!.id, state: 'held' } });
    expect(provider.payloads).toEqual([]);
    clock += 6 * 3_600_000;
    expect(await releaseDue(quiet)).toEqual([{ id: held[1]!.id, state: 'released' }]);
    expect(provider.payloads).toHaveLength(1);

    // The day's cap is spent: the next approved send waits for it to reset, charged when it leaves.
    expect(await approve(quiet, held[2]!.id)).toMatchObject({ released: { id: held[2]!.id, state: 'held', code: 'CAP_REACHED' } });
    expect(provider.payloads).toHaveLength(1);
    expect((await store.getDelivery(held[2]!.id))!.status).toBe('approved');
  });

  it('an approved send whose release could not happen within the grace ends expired, its row too', async () => {
    const d = await deps('console', { NOTIFY_APPROVAL_TTL_S: '86400', NOTIFY_SCHEDULE_GRACE_S: '60' });
    const held = await send(d, SMS, false);
    const sha = (await store.getDelivery(held.id))!.approval!.payload_sha256;
    // The process that approved died before its release could claim anything.
    const dying = {
      ...d,
      store: Object.assign(Object.create(store) as SqliteStore, { claimDue: async () => Promise.reject(new Error('process died')) }),
    };
    expect((await decideApproval(dying, held.id, { decision: 'approve', by: 'ops', seenSha256: sha })).record.status).toBe('approved');
    clock += 61_000;
    expect(await releaseDue(d)).toEqual([{ id: held.id, state: 'expired' }]);
    expect((await store.getDelivery(held.id))!.status).toBe('expired');
    expect(provider.payloads).toEqual([]);
  });

  it('a scheduled send that meets a rule at its release is held under its own id, and its approval sends it once under that id', async () => {
    const d = await deps('console');
    const at = new Date(clock + 60_000).toISOString();
    const scheduled = await send(d, { ...SMS, send_at: at }, false);
    expect(scheduled).toMatchObject({ status: 'scheduled', send_at: at });
    clock += 60_000;
    expect(await releaseDue(d)).toEqual([{ id: scheduled.id, state: 'released' }]);
    const held = (await store.getDelivery(scheduled.id))!;
    expect(held).toMatchObject({ status: 'pending_approval', approval: { outcome: 'pending', reasons: ['sms'] } });
    expect(await store.findDeliveries({ limit: 10 })).toHaveLength(1);
    expect(provider.payloads).toEqual([]);
    const decided = await decideApproval(d, scheduled.id, { decision: 'approve', by: 'ops', seenSha256: held.approval!.payload_sha256 });
    expect(decided).toMatchObject({
      status: 'approved',
      released: { id: scheduled.id, state: 'released' },
      record: { id: scheduled.id, status: 'sent' },
    });
    expect(provider.payloads).toEqual([held.payload]);
    expect(await releaseDue(d)).toEqual([]);
    expect(provider.payloads).toHaveLength(1);
  });
});
