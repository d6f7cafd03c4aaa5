/**
 * The escalate use case on a real SQLite store with a clock of our own: the first send, its
 * steps kept in the outbox (the step channel's call, the text saying what it escalates, the
 * same question), released through the outbox's own release, answered through any step's link,
 * cancelled by an answer or a retract, and stopped by a cap with CAP_REACHED.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeProvider, FakeSlack, openTempStore, pipelineDeps, SLACK_ENV, SMS_ENV } from '../../test/helpers/pipeline-kit.js';
import type { Config } from '../config/config.js';
import { silentLogger } from '../core/log.js';
import { DeliveryUnknownError, ProviderRejectedError } from '../providers/errors.js';
import { StoreUnavailableError } from '../store/errors.js';
import type { SqliteStore } from '../store/sqlite/store.js';
import { answerQuestion } from './answer.js';
import { decideApproval } from './decide-approval.js';
import { sendEscalating } from './escalate.js';
import { releaseDue } from './outbox.js';
import { takeReply } from './replies.js';
import type { PipelineDeps, SendResult } from './pipeline.js';
import { retractNotification } from './retract.js';

let store: SqliteStore;
let clock: number;
let slack: FakeSlack;
let sms: FakeProvider;
const T0 = Date.UTC(2026, 5, 1, 12);
const LINK = /https:\/\/notify\.example\.com\/answer\/([A-Za-z0-9_-]{43})/;
const POLICY = 'oncall=sms:+14155550100@1m,email:lead@example.com@2m';

const deps = (env: Record<string, string> = {}): Promise<PipelineDeps & { config: Config }> =>
  pipelineDeps({
    store,
    providers: { slack, sms },
    env: { NOTIFY_PUBLIC_URL: 'https://notify.example.com', ...SLACK_ENV, ...SMS_ENV, NOTIFY_ESCALATIONS: POLICY, ...env },
    now: () => clock,
    capGate: true,
  });
const PAGE = { via: 'slack', channel: 'C0123ABCD', text: 'Disk full on db-1', escalate: 'oncall' };
const send = async (d: PipelineDeps, call: Record<string, unknown> = PAGE) =>
  (await sendEscalating(d, call.via as string, call, { client: 'bot' })) as SendResult;
const release = async (d: PipelineDeps, at: number) => {
  clock = at;
  return releaseDue(d);
};

beforeEach(async () => {
  store = await openTempStore('escalate');
  clock = T0;
  slack = new FakeSlack();
  sms = new FakeProvider('sms');
});
afterEach(async () => store.close());

describe('escalate', () => {
  it('sends the first send asking for an acknowledgement, and keeps each step in the outbox due after its delay', async () => {
    const d = await deps();
    const first = await send(d);
    expect(first.status).toBe('sent');
    expect(JSON.stringify(slack.payloads[0])).toMatch(LINK);
    expect((await store.getQuestion(first.id))?.choices).toEqual(['Acknowledge']);
    const steps = await store.escalationSteps(first.id);
    expect(steps.map((s) => [s.via, s.state, s.due_at - T0, s.escalates])).toEqual([
      ['sms', 'scheduled', 60_000, first.id],
      ['email', 'scheduled', 120_000, first.id],
    ]);
    expect(steps[0]!.call).toMatchObject({ via: 'sms', to: '+14155550100', body: `Escalates ${first.id}: Disk full on db-1`, ask: {} });
    expect(steps[1]!.call).toMatchObject({ via: 'email', to: 'lead@example.com', subject: `Escalates ${first.id}: Disk full on db-1` });
    // The same call again (a retry of a keyed send would replay): its steps are not kept twice.
    expect(await store.escalationSteps((await send(d, { ...PAGE, idempotency_key: 'k' })).id)).toHaveLength(2);
  });

  it('releases each step at its time through the outbox; a step link answers the whole escalation and cancels the rest', async () => {
    const d = await deps();
    const first = await send(d);
    expect(await release(d, T0 + 59_000)).toEqual([]);
    const [smsStep, emailStep] = await store.escalationSteps(first.id);
    expect(await release(d, T0 + 60_000)).toEqual([{ id: smsStep!.id, state: 'released' }]);
    expect(sms.payloads).toHaveLength(1);
    expect(JSON.stringify(sms.payloads[0])).toContain(`Escalates ${first.id}`);
    expect(await release(d, T0 + 120_000)).toEqual([{ id: emailStep!.id, state: 'released' }]);
    // The email step (a dry run here: each step keeps its own channel's mode) carries its own link, which answers the first send.
    const raw = ((await store.getDelivery(emailStep!.id))!.payload as { raw: string }).raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    const token = LINK.exec(raw)![1]!;
    expect(JSON.stringify(slack.payloads[0])).not.toContain(token);
    clock = T0 + 130_000;
    expect(await answerQuestion({ store, now: () => clock }, { token }, 'Acknowledge', 'link')).toEqual({
      kind: 'recorded',
      id: first.id,
      answer: { choice: 'Acknowledge', by: 'link', via: 'email', at: T0 + 130_000, step: emailStep!.id },
    });
    expect((await store.getQuestion(first.id))?.answer).toMatchObject({ via: 'email', step: emailStep!.id });
    expect(await store.getQuestion(emailStep!.id)).toBeNull();
  });

  it('an answer before a step is due cancels it and every later one; nothing more leaves', async () => {
    const d = await deps();
    const first = await send(d);
    const token = LINK.exec(JSON.stringify(slack.payloads[0]))![1]!;
    clock = T0 + 59_000;
    const answered = await answerQuestion({ store, now: () => clock }, { token }, 'Acknowledge', 'link');
    expect(answered).toMatchObject({ kind: 'recorded', answer: { via: 'slack' } });
    expect(await release(d, T0 + 200_000)).toEqual([]);
    expect(sms.payloads).toEqual([]);
    expect((await store.escalationSteps(first.id)).map((s) => s.state)).toEqual(['cancelled', 'cancelled']);
  });

  it('an answer after a step left leaves it sent, and still lands', async () => {
    const d = await deps();
    const first = await send(d);
    await release(d, T0 + 60_000);
    clock = T0 + 61_000;
    expect((await answerQuestion({ store, now: () => clock }, { id: first.id }, 'Acknowledge', 'link')).kind).toBe('recorded');
    expect((await store.escalationSteps(first.id)).map((s) => s.state)).toEqual(['released', 'cancelled']);
    expect(sms.payloads).toHaveLength(1);
  });

  it('retracting the first send cancels the steps left', async () => {
    const d = await deps();
    const first = await send(d);
    await release(d, T0 + 60_000);
    const caller = { client: 'bot', operator: false, signal: new AbortController().signal };
    expect((await retractNotification(d, caller, first.id)).status).toBe('retracted');
    expect((await store.escalationSteps(first.id)).map((s) => s.state)).toEqual(['released', 'cancelled']);
  });

  it('retracting a first send that cannot be taken back (a sent SMS) still stops its escalation', async () => {
    const d = await deps();
    const first = await send(d, { via: 'sms', to: '+14155550123', body: 'Disk full', escalate: 'oncall' });
    const caller = { client: 'bot', operator: false, signal: new AbortController().signal };
    await expect(retractNotification(d, caller, first.id)).rejects.toMatchObject({ code: 'ALREADY_SENT' });
    expect((await store.escalationSteps(first.id)).map((s) => s.state)).toEqual(['cancelled', 'cancelled']);
  });

  it('a first send awaiting approval has no steps; declined, none are ever kept', async () => {
    const d = await deps({ NOTIFY_APPROVAL: 'slack', NOTIFY_APPROVAL_MODE: 'console' });
    const first = await send(d);
    expect(first.status).toBe('pending_approval');
    expect(await store.escalationSteps(first.id)).toEqual([]);
    const row = (await store.getDelivery(first.id))!;
    await decideApproval(d, first.id, { decision: 'decline', by: 'ops', seenSha256: row.approval!.payload_sha256 });
    expect(await release(d, T0 + 600_000)).toEqual([]);
    expect(await store.escalationSteps(first.id)).toEqual([]);
    expect(sms.payloads).toEqual([]);
  });

  it('an approved first send keeps its steps as it is released, due from then', async () => {
    const d = await deps({ NOTIFY_APPROVAL: 'slack', NOTIFY_APPROVAL_MODE: 'console' });
    const first = await send(d);
    const row = (await store.getDelivery(first.id))!;
    clock = T0 + 300_000;
    // The decision releases it at once.
    expect((await decideApproval(d, first.id, { decision: 'approve', by: 'ops', seenSha256: row.approval!.payload_sha256 })).status).toBe(
      'approved',
    );
    expect(slack.payloads).toHaveLength(1);
    expect((await store.escalationSteps(first.id)).map((s) => [s.via, s.due_at - T0])).toEqual([
      ['sms', 360_000],
      ['email', 420_000],
    ]);
  });

  it('a first send held by quiet hours keeps its steps when it leaves, due from then, not from the call', async () => {
    // Slack quiet from 11:00 to 13:00 UTC; T0 is 12:00.
    const d = await deps({ NOTIFY_QUIET_HOURS: 'slack=11:00-13:00@UTC' });
    const first = await send(d);
    expect(first.status).toBe('held');
    expect(await store.escalationSteps(first.id)).toEqual([]);
    expect((await release(d, T0 + 3_600_000)).map((r) => r.state)).toEqual(['released']);
    expect((await store.escalationSteps(first.id)).map((s) => s.due_at - T0)).toEqual([3_660_000, 3_720_000]);
  });

  it('a first send the provider refuses fails, and its steps are cancelled: nothing escalates a send its caller saw fail', async () => {
    const d = await deps();
    slack.failWith = new ProviderRejectedError('slack', 'channel_not_found', 'channel_not_found');
    await expect(send(d)).rejects.toMatchObject({ code: 'PROVIDER_REJECTED' });
    const [root] = await store.listDeliveries(1);
    expect((await store.escalationSteps(root!.id)).map((s) => s.state)).toEqual(['cancelled', 'cancelled']);
    expect(await release(d, T0 + 600_000)).toEqual([]);
    expect(sms.payloads).toEqual([]);
  });

  it('a first send that may have left (DELIVERY_UNKNOWN) keeps its steps, and its link still answers', async () => {
    const d = await deps();
    slack.failWith = new DeliveryUnknownError('slack', 'timed out after the request was written');
    await expect(send(d)).rejects.toMatchObject({ code: 'DELIVERY_UNKNOWN' });
    const token = LINK.exec(JSON.stringify(slack.payloads[0]))![1]!;
    const [root] = await store.listDeliveries(1);
    expect((await store.escalationSteps(root!.id)).map((s) => s.state)).toEqual(['scheduled', 'scheduled']);
    clock = T0 + 30_000;
    expect(await answerQuestion({ store, now: () => clock }, { token }, 'Acknowledge', 'link')).toMatchObject({ kind: 'recorded' });
    expect(await release(d, T0 + 600_000)).toEqual([]);
  });

  it('a step due at once waits while the first send is in flight; when the first send fails, it is cancelled and never leaves', async () => {
    const d = await deps({ NOTIFY_ESCALATIONS: 'now=sms:+14155550100@0' });
    let fail!: () => void;
    slack.hold = new Promise((resolve) => (fail = resolve));
    slack.failWith = new ProviderRejectedError('slack', 'channel_not_found', 'channel_not_found');
    const sending = send(d, { ...PAGE, escalate: 'now' }).catch((err: unknown) => err);
    for (let i = 0; slack.payloads.length === 0 && i < 100; i++) await new Promise((r) => setTimeout(r, 5));
    const rootId = (await store.listOutbox(['scheduled'], 1))[0]!.escalates!;
    expect(await release(d, T0 + 5_000)).toEqual([]);
    fail();
    expect(await sending).toMatchObject({ code: 'PROVIDER_REJECTED' });
    expect(await release(d, T0 + 10_000)).toEqual([]);
    expect((await store.escalationSteps(rootId)).map((s) => s.state)).toEqual(['cancelled']);
    expect(sms.payloads).toEqual([]);
  });

  it('a step due at once leaves as soon as the first send is recorded, not before', async () => {
    const d = await deps({ NOTIFY_ESCALATIONS: 'now=sms:+14155550100@0' });
    let go!: () => void;
    slack.hold = new Promise((resolve) => (go = resolve));
    const sending = send(d, { ...PAGE, escalate: 'now' });
    for (let i = 0; slack.payloads.length === 0 && i < 100; i++) await new Promise((r) => setTimeout(r, 5));
    expect(await release(d, T0 + 1_000)).toEqual([]);
    go();
    const first = await sending;
    const [step] = await store.escalationSteps(first.id);
    expect(await release(d, T0 + 1_000)).toEqual([{ id: step!.id, state: 'released' }]);
    expect(sms.payloads).toHaveLength(1);
  });

  it('a store that cannot keep the steps fails the send before its provider call: nothing leaves without its escalation', async () => {
    const d = await deps();
    const failing = Object.create(store) as SqliteStore;
    failing.scheduleEscalation = async () => {
      throw new StoreUnavailableError('sqlite', 'disk I/O error');
    };
    await expect(send({ ...d, store: failing })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(slack.payloads).toEqual([]);
  });

  it('an SMS reply to a step answers the first send, naming the step', async () => {
    const d = await deps();
    const first = await send(d);
    const [smsStep] = await store.escalationSteps(first.id);
    await release(d, T0 + 60_000);
    expect(JSON.stringify(sms.payloads[0])).toContain('Reply 1 to acknowledge');
    clock = T0 + 65_000;
    const taken = await takeReply({ store, now: () => clock, log: silentLogger }, 'sms', { kind: 'code', from: '+14155550100', code: 1 });
    expect(taken).toMatchObject({ kind: 'answered', id: first.id, outcome: { kind: 'recorded' } });
    expect((await store.getQuestion(first.id))?.answer).toEqual({
      choice: 'Acknowledge',
      by: '+14155550100',
      via: 'sms',
      at: T0 + 65_000,
      step: smsStep!.id,
    });
    expect((await store.escalationSteps(first.id)).map((s) => s.state)).toEqual(['released', 'cancelled']);
  });

  it('a cap reached stops a step, CAP_REACHED in its outcome, rather than holding it until the cap resets', async () => {
    const d = await deps({ NOTIFY_CAPS: '*:sms=1/day' });
    await sendEscalating(d, 'sms', { via: 'sms', to: '+14155550123', body: 'uses the cap' }, { client: 'bot' });
    const first = await send(d);
    expect(await release(d, T0 + 60_000)).toEqual([{ id: expect.any(String), state: 'failed', code: 'CAP_REACHED' }]);
    const [step] = await store.escalationSteps(first.id);
    expect(step!.state).toBe('failed');
    expect(step!.outcome).toMatchObject({ error: { code: 'CAP_REACHED' } });
  });
});
