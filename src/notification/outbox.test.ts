/**
 * Scheduled sends, quiet hours and caps through the pipeline, with an injected clock, a
 * counting fake provider and a real SQLite store: what is answered at once, what the release
 * sends (once), what expires, what a dead release leaves, and what a cancel racing a release gets.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeProvider, failure, openTempStore, pipelineDeps, SMS_ENV } from '../../test/helpers/pipeline-kit.js';
import { loadConfig } from '../config/config.js';
import { silentLogger } from '../core/log.js';
import { ProviderTransientError } from '../providers/errors.js';
import type { SqliteStore } from '../store/sqlite/store.js';
import { waitingEntry } from '../store/types.js';
import { cancelWaiting, releaseDue, releaseNow } from './outbox.js';
import { sendNotification, type PipelineDeps } from './pipeline.js';
import { schemaHash } from '@notify-mcp/union';

// Thursday 15 January 2026, 12:00 UTC (13:00 in Berlin).
const T0 = Date.UTC(2026, 0, 15, 12);
let clock = T0;
let store: SqliteStore;
let sms: FakeProvider;

const deps = (env: Record<string, string> = {}): Promise<PipelineDeps> =>
  pipelineDeps({ store, providers: { sms }, env: { ...SMS_ENV, ...env }, now: () => clock, capGate: true });

const text = (extra: Record<string, unknown> = {}) => ({ via: 'sms', to: '+14155550123', body: 'Disk full', ...extra });
const at = (ms: number) => new Date(ms).toISOString();

beforeEach(async () => {
  clock = T0;
  store = await openTempStore('outbox');
  sms = new FakeProvider();
});
afterEach(async () => store.close());

describe('send_at', () => {
  it('answers scheduled at once, sends nothing, and the release at the due time sends it once under the same id', async () => {
    const d = await deps();
    const sendAt = '2026-01-15T14:00:00+01:00'; // 13:00 UTC
    const result = await sendNotification(d, 'sms', text({ send_at: sendAt }), { client: 'bot' });
    expect(result).toMatchObject({ via: 'sms', status: 'scheduled', send_at: '2026-01-15T13:00:00.000Z', provider: 'fake' });
    expect(sms.payloads).toEqual([]);
    expect(await store.listDeliveries(10)).toEqual([]);

    clock = T0 + 3_599_999;
    expect(await releaseDue(d)).toEqual([]);
    clock = T0 + 3_600_000;
    expect(await releaseDue(d)).toEqual([{ id: result.id, state: 'released' }]);
    expect(sms.payloads).toEqual([{ To: '+14155550123', Body: 'Disk full', From: '+14155550000' }]);
    expect(await store.getDelivery(result.id)).toMatchObject({ status: 'sent', client: 'bot', provider_message_id: 'fake-1' });
    expect(await store.getOutboxEntry(result.id)).toMatchObject({ state: 'released', outcome: { id: result.id, status: 'sent' } });
    // Nothing is left to release.
    clock += 86_400_000;
    expect(await releaseDue(d)).toEqual([]);
    expect(sms.payloads.length).toBe(1);
  });

  it('refuses a send_at more than 30 days ahead, and sends one already past at once', async () => {
    const d = await deps();
    const far = await failure(sendNotification(d, 'sms', text({ send_at: at(T0 + 30 * 86_400_000 + 1000) }), { client: 'bot' }));
    expect(far.toBody()).toMatchObject({ code: 'INVALID_FIELD', path: '/send_at' });
    expect(far.message).toMatch(/more than 30 days ahead/);
    const past = await sendNotification(d, 'sms', text({ send_at: at(T0 - 5000) }), { client: 'bot' });
    expect(past.status).toBe('sent');
    expect(await store.listOutbox(['scheduled', 'held'], 10)).toEqual([]);
  });

  it('refuses now what would be refused at release: a recipient not allowed, an opted-out one', async () => {
    const d = await deps();
    const notAllowed = await failure(
      sendNotification(d, 'sms', text({ to: '+442071838750', send_at: at(T0 + 60_000) }), { client: 'bot' }),
    );
    expect(notAllowed.code).toBe('RECIPIENT_NOT_ALLOWED');
    await store.addOptOut('sms', '+14155550123', T0);
    expect((await failure(sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000) }), { client: 'bot' }))).code).toBe(
      'RECIPIENT_OPTED_OUT',
    );
    expect(await store.listOutbox(['scheduled'], 10)).toEqual([]);
  });

  it('a keyed scheduling replays: the same key and payload give the same id, another payload conflicts', async () => {
    const d = await deps();
    const first = await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000), idempotency_key: 'k' }), { client: 'bot' });
    const again = await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000), idempotency_key: 'k' }), { client: 'bot' });
    expect(again).toMatchObject({ id: first.id, status: 'scheduled', replayed: true });
    const conflict = await failure(
      sendNotification(d, 'sms', text({ body: 'other', send_at: at(T0 + 60_000), idempotency_key: 'k' }), { client: 'bot' }),
    );
    expect(conflict.code).toBe('IDEMPOTENCY_CONFLICT');
    // Another client's key is its own.
    expect((await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000), idempotency_key: 'k' }), { client: 'other' })).id).not.toBe(
      first.id,
    );
    expect((await store.listOutbox(['scheduled'], 10)).length).toBe(2);
  });

  it('a restart releases what fell due within the grace, and expires what is older, sending nothing for it', async () => {
    const d = await deps({ NOTIFY_SCHEDULE_GRACE_S: '600' });
    const old = await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000) }), { client: 'bot' });
    const recent = await sendNotification(d, 'sms', text({ send_at: at(T0 + 700_000) }), { client: 'bot' });
    clock = T0 + 60_000 + 600_001; // old is 600.001 s late, recent 0.
    const released = await releaseDue(d);
    expect(released).toEqual(expect.arrayContaining([{ id: old.id, state: 'expired' }]));
    expect(released.length).toBe(1);
    clock = T0 + 700_000 + 599_000;
    expect(await releaseDue(d)).toEqual([{ id: recent.id, state: 'released' }]);
    expect(sms.payloads.length).toBe(1);
    expect(await store.getOutboxEntry(old.id)).toMatchObject({ state: 'expired' });
    expect(await store.getDelivery(old.id)).toBeNull();
  });

  it('a release refused at the due time (the allowlist changed) is failed with its code, nothing sent', async () => {
    const scheduled = await sendNotification(await deps(), 'sms', text({ send_at: at(T0 + 60_000) }), { client: 'bot' });
    clock = T0 + 60_000;
    const narrowed = await deps({ NOTIFY_SMS_ALLOW: '+1212' });
    expect(await releaseDue(narrowed)).toEqual([{ id: scheduled.id, state: 'failed', code: 'RECIPIENT_NOT_ALLOWED' }]);
    expect(sms.payloads).toEqual([]);
  });

  it('a release left by a process that died before calling the provider is sent by the next, once', async () => {
    const d = await deps();
    const scheduled = await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000) }), { client: 'bot' });
    clock = T0 + 60_000;
    // The dead process claimed it and nothing more.
    await store.claimDue(clock, { limit: 10, owner: 'dead', leaseMs: 60_000, graceMs: 3_600_000 });
    expect(await releaseDue(d)).toEqual([]);
    clock += 2 * d.config.sendBudgetMs + 1_000;
    expect(await releaseDue(d)).toEqual([{ id: scheduled.id, state: 'released' }]);
    expect(sms.payloads.length).toBe(1);
  });

  it('a release left mid-send (the provider call may have started) is unknown, never a second send', async () => {
    const d = await deps();
    const scheduled = await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000) }), { client: 'bot' });
    clock = T0 + 60_000;
    await store.claimDue(clock, { limit: 10, owner: 'dead', leaseMs: 60_000, graceMs: 3_600_000 });
    // The dead process's idempotency claim, moved to `sending` as the pipeline does before the provider call.
    const key = JSON.stringify(['bot', `outbox:${scheduled.id}`]);
    const claim = await store.claimIdempotency(key, schemaHash(text()), clock, {
      ttlMs: 86_400_000,
      staleAfterMs: 20_000,
      notificationId: scheduled.id,
    });
    if (claim.kind !== 'claimed') throw new Error('no claim');
    expect(await store.markIdempotencySending(key, claim.owner, scheduled.id)).toBe(true);
    clock += 2 * d.config.sendBudgetMs + 1_000;
    expect(await releaseDue(d)).toEqual([{ id: scheduled.id, state: 'unknown', code: 'DELIVERY_UNKNOWN' }]);
    expect(sms.payloads).toEqual([]);
    expect(await store.getDelivery(scheduled.id)).toMatchObject({ status: 'unknown', error_code: 'DELIVERY_UNKNOWN' });
  });

  it('a cancel before the release wins: nothing is sent; after it, the cancel is told it left', async () => {
    const d = await deps();
    const a = await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000) }), { client: 'bot' });
    const b = await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000) }), { client: 'bot' });
    expect(await cancelWaiting(d, a.id)).toMatchObject({ kind: 'cancelled', entry: { state: 'cancelled' } });
    clock = T0 + 60_000;
    expect(await releaseDue(d)).toEqual([{ id: b.id, state: 'released' }]);
    expect(await cancelWaiting(d, b.id)).toMatchObject({ kind: 'not_waiting', entry: { state: 'released' } });
    expect(await cancelWaiting(d, a.id)).toMatchObject({ kind: 'not_waiting', entry: { state: 'cancelled' } });
    expect(await cancelWaiting(d, 'ntf_nope')).toEqual({ kind: 'not_found' });
    expect(sms.payloads.length).toBe(1);
  });

  /** a due now and its provider call hanging (until `open`), in a pass under way; b due 1 s later. */
  async function hungRelease(d: PipelineDeps, opts: Parameters<typeof releaseDue>[1] = {}) {
    const a = await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000) }), { client: 'bot' });
    const b = await sendNotification(d, 'sms', text({ body: 'later', send_at: at(T0 + 61_000) }), { client: 'bot' });
    let open!: () => void;
    sms.hold = new Promise((r) => (open = r));
    clock = T0 + 60_000;
    const releasing = releaseDue(d, opts);
    while (sms.payloads.length === 0) await new Promise((r) => setTimeout(r, 5));
    return { a, b, open, releasing };
  }

  it('a release hanging within its budget holds up nothing that falls due behind it', async () => {
    const { a, b, open, releasing } = await hungRelease(await deps());
    sms.hold = undefined;
    clock = T0 + 61_000;
    // The pass asks the store again while a's provider call hangs: b leaves without waiting for it.
    for (let waited = 0; sms.payloads.length < 2 && waited < 5_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    expect(await store.getOutboxEntry(b.id)).toMatchObject({ state: 'released' });
    expect(await store.getOutboxEntry(a.id)).toMatchObject({ state: 'releasing' });
    open();
    expect((await releasing).map((r) => r.id)).toEqual([b.id, a.id]);
  });

  it('a pass of a stopping process claims nothing more while its last release ends', async () => {
    let claiming = true;
    const { a, b, open, releasing } = await hungRelease(await deps(), { claiming: () => claiming });
    claiming = false;
    clock = T0 + 61_000;
    await new Promise((r) => setTimeout(r, 1_500));
    open();
    expect(await releasing).toEqual([{ id: a.id, state: 'released' }]);
    expect(await store.getOutboxEntry(b.id)).toMatchObject({ state: 'scheduled' });
  });

  it('an approved send still in the outbox, retracted there, ends cancelled on its record too, by the operator', async () => {
    const d = await deps();
    const approval = {
      outcome: 'approved' as const,
      reasons: ['all'],
      payload_sha256: 'ab'.repeat(32),
      expires_at: T0 + 60_000,
      decided_by: 'ops',
      decided_at: T0,
    };
    const id = 'ntf_approved_waiting';
    await store.writeRecord({
      id,
      via: 'sms',
      status: 'approved',
      provider: 'fake',
      provider_message_id: null,
      payload: { To: '+14155550123', Body: 'Disk full' },
      error_code: null,
      attempts: 0,
      attempt_log: [],
      latency_ms: 0,
      client: 'bot',
      idempotency_key: null,
      created_at: T0,
      provider_status: null,
      provider_status_code: null,
      status_updated_at: T0,
      approval,
    });
    await store.scheduleSend(
      waitingEntry({
        id,
        via: 'sms',
        client: 'bot',
        call: {},
        approved_sha256: approval.payload_sha256,
        state: 'scheduled',
        send_at: null,
        due_at: T0,
        created_at: T0,
      }),
    );
    expect(await cancelWaiting(d, id, { client: 'ops', tool: null })).toMatchObject({ kind: 'cancelled' });
    expect(await store.getDelivery(id)).toMatchObject({ status: 'cancelled', approval: { outcome: 'approved' } });
    expect((await store.auditFor(id)).filter((e) => e.kind === 'retract')).toMatchObject([{ client: 'ops', tool: null }]);
    expect(await releaseDue(d)).toEqual([]);
    expect(sms.payloads).toEqual([]);
  });

  it('a cancel racing a release mid-send: the release has it, the cancel says so, one send', async () => {
    const d = await deps();
    const a = await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000) }), { client: 'bot' });
    clock = T0 + 60_000;
    let open!: () => void;
    sms.hold = new Promise((r) => (open = r));
    const releasing = releaseDue(d);
    while (sms.payloads.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(await cancelWaiting(d, a.id)).toMatchObject({ kind: 'not_waiting', entry: { state: 'releasing' } });
    open();
    expect(await releasing).toEqual([{ id: a.id, state: 'released' }]);
  });

  it('releaseNow releases one due entry on its own, whatever held it', async () => {
    const d = await deps();
    const a = await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000) }), { client: 'bot' });
    const b = await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000) }), { client: 'bot' });
    expect(await releaseNow(d, a.id)).toBeUndefined(); // not due yet
    clock = T0 + 60_000;
    expect(await releaseNow(d, a.id)).toEqual({ id: a.id, state: 'released' });
    expect((await store.getOutboxEntry(b.id))!.state).toBe('scheduled');
  });
});

describe('quiet hours', () => {
  const QUIET = { NOTIFY_QUIET_HOURS: 'sms=22:00-07:00@Europe/Berlin' };

  it('holds a send inside the window until it ends, and releases it then', async () => {
    clock = Date.UTC(2026, 0, 15, 22); // 23:00 in Berlin
    const d = await deps(QUIET);
    const held = await sendNotification(d, 'sms', text(), { client: 'bot' });
    expect(held).toMatchObject({ status: 'held', release_at: '2026-01-16T06:00:00.000Z' });
    expect(held.send_at).toBeUndefined();
    expect(sms.payloads).toEqual([]);
    clock = Date.UTC(2026, 0, 16, 6);
    expect(await releaseDue(d)).toEqual([{ id: held.id, state: 'released' }]);
    expect(sms.payloads.length).toBe(1);
  });

  it('a send outside the window, or on another channel, goes at once', async () => {
    const d = await deps(QUIET);
    expect((await sendNotification(d, 'sms', text(), { client: 'bot' })).status).toBe('sent'); // 13:00 in Berlin
  });

  it('a send_at inside the window is held to the window end, keeping its send_at', async () => {
    const d = await deps(QUIET);
    const r = await sendNotification(d, 'sms', text({ send_at: '2026-01-15T23:30:00+01:00' }), { client: 'bot' });
    expect(r).toMatchObject({ status: 'held', send_at: '2026-01-15T22:30:00.000Z', release_at: '2026-01-16T06:00:00.000Z' });
  });

  it('urgent is held like any other by default, and passes only with NOTIFY_QUIET_HOURS_URGENT=allow, logged either way', async () => {
    clock = Date.UTC(2026, 0, 15, 22);
    const lines: Array<[string, Record<string, unknown> | undefined]> = [];
    const log = { ...silentLogger, warn: (m: string, f?: Record<string, unknown>) => void lines.push([m, f]), child: () => log };
    const denied = { ...(await deps(QUIET)), log };
    expect((await sendNotification(denied, 'sms', text({ urgent: true }), { client: 'bot' })).status).toBe('held');
    const allowed = { ...(await deps({ ...QUIET, NOTIFY_QUIET_HOURS_URGENT: 'allow' })), log };
    expect((await sendNotification(allowed, 'sms', text({ urgent: true }), { client: 'bot' })).status).toBe('sent');
    expect(lines.map(([m, f]) => [m, f?.window])).toEqual([
      ['urgent send held by quiet hours (NOTIFY_QUIET_HOURS_URGENT=deny)', '22:00-07:00@Europe/Berlin'],
      ['urgent send passed quiet hours', '22:00-07:00@Europe/Berlin'],
    ]);
  });
});

describe('caps', () => {
  it('counts per client at the moment of sending, answers CAP_REACHED with resets_at, and a scheduled send counts when it leaves', async () => {
    const d = await deps({ NOTIFY_CAPS: '*:sms=2/hour' });
    await sendNotification(d, 'sms', text(), { client: 'bot' });
    const later = await sendNotification(d, 'sms', text({ send_at: at(T0 + 60_000) }), { client: 'bot' });
    // Scheduling did not count: this one still fits.
    await sendNotification(d, 'sms', text(), { client: 'bot' });
    const err = await failure(sendNotification(d, 'sms', text(), { client: 'bot' }));
    expect(err.toBody()).toMatchObject({ code: 'CAP_REACHED', via: 'sms', resets_at: '2026-01-15T13:00:00.000Z' });
    expect(err.message).toMatch(/bot has used 2 of its cap of 2 sms per hour/);
    // Another client has its own.
    expect((await sendNotification(d, 'sms', text(), { client: 'other' })).status).toBe('sent');
    clock = T0 + 60_000;
    // At its time the cap is full: held until the cap resets, not failed, and nothing sent.
    expect(await releaseDue(d)).toEqual([{ id: later.id, state: 'held', code: 'CAP_REACHED' }]);
    expect(sms.payloads.length).toBe(3);
    const reset = Date.UTC(2026, 0, 15, 13);
    expect(await store.getOutboxEntry(later.id)).toMatchObject({ state: 'held', due_at: reset, owner: null, send_at: T0 + 60_000 });
    expect(await store.nextDue(['scheduled', 'held'], 60_000)).toBe(reset);
    clock = reset - 1;
    expect(await releaseDue(d)).toEqual([]);
    // It leaves when the cap resets, once, and counts against the new period.
    clock = reset;
    expect(await releaseDue(d)).toEqual([{ id: later.id, state: 'released' }]);
    expect(sms.payloads.length).toBe(4);
    expect(await store.getDelivery(later.id)).toMatchObject({ status: 'sent' });
    expect((await sendNotification(d, 'sms', text(), { client: 'bot' })).status).toBe('sent');
    expect((await failure(sendNotification(d, 'sms', text(), { client: 'bot' }))).code).toBe('CAP_REACHED');
  });

  it('a cap reached at release holds a scheduled dry run too, then the reset releases it', async () => {
    const d = await pipelineDeps({
      store,
      providers: {},
      env: { NOTIFY_SMS_ALLOW: '+1415', NOTIFY_CAPS: 'bot:sms=1/day' },
      now: () => clock,
      capGate: true,
    });
    const first = await sendNotification(d, 'sms', text({ send_at: at(T0 + 1_000) }), { client: 'bot' });
    const second = await sendNotification(d, 'sms', text({ send_at: at(T0 + 1_000) }), { client: 'bot' });
    clock = T0 + 1_000;
    const released = await releaseDue(d);
    expect(released.map((r) => r.state).sort()).toEqual(['held', 'released']);
    const heldId = released.find((r) => r.state === 'held')!.id;
    expect([first.id, second.id]).toContain(heldId);
    const midnight = Date.UTC(2026, 0, 16);
    expect(await store.getOutboxEntry(heldId)).toMatchObject({ state: 'held', due_at: midnight });
    clock = midnight;
    expect(await releaseDue(d)).toEqual([{ id: heldId, state: 'released' }]);
    expect(await store.getDelivery(heldId)).toMatchObject({ status: 'dry_run' });
  });

  it('measures SMS segments, and a named client overrides the * rule', async () => {
    const d = await deps({ NOTIFY_CAPS: '*:sms_segments=3/day,vip:sms_segments=100/day', NOTIFY_SMS_MAX_SEGMENTS: '3' });
    const long = 'x'.repeat(200); // 2 segments
    await sendNotification(d, 'sms', text({ body: long }), { client: 'bot' });
    const err = await failure(sendNotification(d, 'sms', text({ body: long }), { client: 'bot' }));
    expect(err.toBody()).toMatchObject({ code: 'CAP_REACHED', resets_at: '2026-01-16T00:00:00.000Z' });
    for (let i = 0; i < 5; i++) await sendNotification(d, 'sms', text({ body: long }), { client: 'vip' });
  });

  it('refuses a cap on a measure no channel has', () => {
    expect(() => loadConfig({ NOTIFY_CAPS: '*:fax_pages=3/day' })).toThrow(
      /"fax_pages" is not a measure; use one of .*sms_segments.*email_recipients|"fax_pages" is not a measure; use one of .*email_recipients.*sms_segments/,
    );
    expect(() => loadConfig({ NOTIFY_CAPS: 'sms=3/day' })).toThrow(/must look like/);
  });
});

describe('congestion holds a release; it never drops it', () => {
  /** Twilio answering 429 to the first `busy` requests. */
  class Congested extends FakeProvider {
    constructor(private busy: number) {
      super();
    }
    override async send(payload: unknown) {
      if (this.busy > 0) {
        this.busy--;
        throw new ProviderTransientError('fake', '429 Too Many Requests', { rateLimited: true, retryAfterMs: 2_000 });
      }
      return super.send(payload);
    }
  }

  it('a release that meets a rate-limited provider waits again with backoff and leaves once the provider takes it', async () => {
    sms = new Congested(Number.POSITIVE_INFINITY);
    const d = await deps({ NOTIFY_SEND_BUDGET_MS: '300', NOTIFY_SCHEDULE_GRACE_S: '60' });
    const scheduled = await sendNotification(d, 'sms', text({ send_at: at(T0 + 1_000) }), { client: 'bot' });
    clock = T0 + 1_000;
    expect(await releaseDue(d)).toEqual([{ id: scheduled.id, state: 'held', code: 'RATE_LIMITED' }]);
    const waiting = (await store.getOutboxEntry(scheduled.id))!;
    expect(waiting).toMatchObject({ state: 'held', congested_since: T0 + 1_000 });
    // Retry-After (2 s) at least; no record yet: nothing was sent, and the release is not over.
    expect(waiting.due_at).toBeGreaterThanOrEqual(T0 + 3_000);
    expect(await store.getDelivery(scheduled.id)).toBeNull();
    (sms as Congested)['busy'] = 0;
    clock = waiting.due_at;
    expect(await releaseDue(d)).toEqual([{ id: scheduled.id, state: 'released' }]);
    expect(sms.payloads).toHaveLength(1);
    expect((await store.getDelivery(scheduled.id))!.status).toBe('sent');
  });

  it("past the grace from the first congestion, the release fails with the provider's code, recorded", async () => {
    sms = new Congested(Number.POSITIVE_INFINITY);
    const d = await deps({ NOTIFY_SEND_BUDGET_MS: '300', NOTIFY_SCHEDULE_GRACE_S: '10' });
    const scheduled = await sendNotification(d, 'sms', text({ send_at: at(T0 + 1_000) }), { client: 'bot' });
    clock = T0 + 1_000;
    const outcomes: string[] = [];
    for (let i = 0; i < 20; i++) {
      const [r] = await releaseDue(d);
      if (!r) break;
      outcomes.push(r.state);
      if (r.state !== 'held') break;
      clock = (await store.getOutboxEntry(scheduled.id))!.due_at;
    }
    expect(outcomes.at(-1)).toBe('failed');
    expect(outcomes.slice(0, -1).every((s) => s === 'held')).toBe(true);
    expect(clock - (T0 + 1_000)).toBeLessThanOrEqual(10_000);
    expect((await store.getDelivery(scheduled.id))!).toMatchObject({ status: 'failed', error_code: 'RATE_LIMITED' });
    expect(sms.payloads).toEqual([]);
  });
});
