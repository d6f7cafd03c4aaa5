/**
 * Editing a notification (./edit.ts), with the kit's fake providers, a real SQLite store and
 * a clock of our own: which states take an edit and where each leaves the record, what
 * reached the provider's edit, the rules asked again, and the sends still waiting (in the
 * outbox, or for a person), whose call or payload the edit replaces before they leave.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeProvider, FakeSlack, failure, openTempStore, pipelineDeps, SLACK_ENV, SMS_ENV } from '../../test/helpers/pipeline-kit.js';
import { DeliveryUnknownError, ProviderRejectedError, ProviderTransientError } from '../providers/errors.js';
import type { SqliteStore } from '../store/sqlite/store.js';
import { isApprovalAsk, payloadSha256, type ApprovalAsk } from './approval.js';
import { decideApproval } from './decide-approval.js';
import { editNotification } from './edit.js';
import { releaseDue } from './outbox.js';
import type { Caller } from './own.js';
import { sendNotification, sendOrAsk, type PipelineDeps, type SendOptions } from './pipeline.js';
import { applyReceipt } from './status-receipt.js';

const T0 = Date.UTC(2026, 5, 1, 12);
let clock: number;
let store: SqliteStore;
let sms: FakeProvider;
let slack: FakeSlack;

const deps = (env: Record<string, string> = {}): Promise<PipelineDeps> =>
  pipelineDeps({ store, providers: { sms, slack }, env: { ...SMS_ENV, ...SLACK_ENV, ...env }, now: () => clock });
const caller = (client: string | null = 'bot', operator = false): Caller => ({ client, operator, signal: new AbortController().signal });
const send = (d: PipelineDeps, call: Record<string, unknown>, opts: Partial<SendOptions> = {}) =>
  sendNotification(d, call.via as string, call, { client: 'bot', ...opts });
/** An edit that must not ask a person (no approval round here). */
const edit = async (...args: Parameters<typeof editNotification>) => {
  const edited = await editNotification(...args);
  if (isApprovalAsk(edited)) throw new Error('the edit asked a person');
  return edited;
};
const iso = (ms: number) => new Date(ms).toISOString();

const POST = { via: 'slack', channel: 'C0123ABCD', text: 'Deploy 142 started' };
const TEXT = { via: 'sms', to: '+14155550123', body: 'Disk full' };
const BLOCKS = [{ type: 'section', text: { type: 'mrkdwn', text: '*Deploy 142 done*' } }];

beforeEach(async () => {
  clock = T0;
  store = await openTempStore('edit');
  sms = new FakeProvider();
  slack = new FakeSlack();
});
afterEach(async () => store.close());

describe('editing a posted message', () => {
  it('hands the post as recorded and the rebuilt payload to the provider, keeps the new payload, and stays sent', async () => {
    const d = await deps();
    const posted = await send(d, POST);
    clock += 5_000;
    const edited = await edit(d, caller(), posted.id, { text: 'Deploy 142 done', blocks: BLOCKS });
    expect(edited).toEqual({ id: posted.id, via: 'slack', status: 'sent', edited_at: iso(T0 + 5_000) });
    expect(slack.edits).toHaveLength(1);
    const [{ posted: before, next }] = slack.edits as [(typeof slack.edits)[0]];
    expect(before).toEqual({ payload: slack.payloads[0], providerMessageId: '1712345678.000101', conversation: 'C0123ABCD' });
    expect(next).toMatchObject({ channel: 'C0123ABCD', text: 'Deploy 142 done', blocks: BLOCKS });
    expect(await store.getDelivery(posted.id)).toMatchObject({
      status: 'sent',
      payload: next,
      provider_status: 'edited',
      status_updated_at: T0 + 5_000,
    });
  });

  it("an operator edits another client's post; anyone else gets NOT_FOUND, as for an id that names nothing", async () => {
    const d = await deps();
    const posted = await send(d, POST);
    expect((await failure(edit(d, caller('someone-else'), posted.id, { text: 'x' }))).code).toBe('NOT_FOUND');
    expect((await failure(edit(d, caller(), 'ntf_nothing', { text: 'x' }))).code).toBe('NOT_FOUND');
    expect(slack.edits).toEqual([]);
    expect(await edit(d, caller('ops', true), posted.id, { text: 'fixed by ops' })).toMatchObject({ status: 'sent' });
    expect(slack.edits.map((e) => e.next)).toMatchObject([{ text: 'fixed by ops' }]);
  });

  it('a dry run is edited in its record alone and stays a dry run', async () => {
    const d = await pipelineDeps({ store, providers: {}, env: { NOTIFY_SLACK_ALLOW: '*' }, now: () => clock });
    const posted = await send(d, POST);
    expect(posted.status).toBe('dry_run');
    const edited = await edit(d, caller(), posted.id, { text: 'Deploy 142 done' });
    expect(edited.status).toBe('dry_run');
    expect(await store.getDelivery(posted.id)).toMatchObject({
      status: 'dry_run',
      provider_status: 'edited',
      payload: { channel: 'C0123ABCD', text: 'Deploy 142 done' },
    });
  });

  type Refusal = { name: string; make: (d: PipelineDeps) => Promise<string>; code: string; message: RegExp };
  const refusals: Refusal[] = [
    {
      name: 'an SMS handed over (its channel cannot change a sent message)',
      make: async (d) => (await send(d, TEXT)).id,
      code: 'ALREADY_SENT',
      message: /cannot be changed once handed over/,
    },
    {
      name: 'an SMS delivered',
      make: async (d) => {
        const { id } = await send(d, TEXT);
        await applyReceipt(d, 'sms', { providerMessageId: 'fake-1', event: 'delivered', providerStatus: 'delivered', code: null });
        return id;
      },
      code: 'INVALID_FIELD',
      message: /cannot be edited/,
    },
    {
      name: 'a post that failed',
      make: async (d) => {
        slack.failWith = new ProviderRejectedError('slack', 'channel_not_found', 'channel_not_found');
        expect((await failure(send(d, POST))).code).toBe('PROVIDER_REJECTED');
        slack.failWith = undefined;
        const [record] = await store.listDeliveries(1);
        expect(record!.status).toBe('failed');
        return record!.id;
      },
      code: 'INVALID_FIELD',
      message: /cannot be edited/,
    },
    {
      name: 'a post retracted',
      make: async (d) => {
        const { id } = await send(d, POST);
        await store.amendDelivery(id, {
          from: 'sent',
          status: 'retracted',
          payload: slack.payloads[0],
          provider_status: 'deleted',
          at: clock,
        });
        return id;
      },
      code: 'INVALID_FIELD',
      message: /cannot be edited/,
    },
  ];
  for (const r of refusals) {
    it(`refuses ${r.name} with ${r.code} and changes nothing`, async () => {
      const d = await deps();
      const id = await r.make(d);
      const before = await store.getDelivery(id);
      const err = await failure(edit(d, caller(), id, { text: 'changed' }));
      expect(err.code).toBe(r.code);
      expect(err.message).toMatch(r.message);
      expect(await store.getDelivery(id)).toEqual(before);
      expect(slack.edits).toEqual([]);
    });
  }

  it('asks the rules again: an empty text is INVALID_FIELD at /text, a channel off the allowlist now RECIPIENT_NOT_ALLOWED', async () => {
    const posted = await send(await deps(), POST);
    const invalid = await failure(edit(await deps(), caller(), posted.id, { text: '' }));
    expect(invalid).toMatchObject({ code: 'INVALID_FIELD', details: { path: '/text' } });
    const narrowed = await deps({ NOTIFY_SLACK_ALLOW: 'C0OTHER00' });
    expect((await failure(edit(narrowed, caller(), posted.id, { text: 'Deploy 142 done' }))).code).toBe('RECIPIENT_NOT_ALLOWED');
    expect(slack.edits).toEqual([]);
    expect(await store.getDelivery(posted.id)).toMatchObject({ payload: slack.payloads[0], provider_status: null });
  });

  it('refuses an edit of a post a person approved as it was (ask mode): it would change what they approved', async () => {
    const d = await deps({ NOTIFY_APPROVAL: 'slack' });
    const asked = await sendOrAsk(d, 'slack', POST, { client: 'bot', approval: { canAsk: true } });
    expect(isApprovalAsk(asked)).toBe(true);
    const { grant } = (asked as ApprovalAsk).request;
    const posted = await sendOrAsk(d, 'slack', POST, { client: 'bot', approval: { canAsk: true, previous: { grant, answer: 'accept' } } });
    expect(posted).toMatchObject({ status: 'sent' });
    if (isApprovalAsk(posted)) throw new Error('asked again');
    const err = await failure(edit(d, caller(), posted.id, { text: 'Deploy 142 done' }));
    expect(err.code).toBe('APPROVAL_REQUIRED');
    expect(err.message).toMatch(/approved notification .* as it was/);
    expect(slack.edits).toEqual([]);
  });

  const providerFailures: Array<[string, Error, string]> = [
    ['refuses', new ProviderRejectedError('slack', 'cant_update_message', 'cant_update_message'), 'PROVIDER_REJECTED'],
    ['may have taken', new DeliveryUnknownError('slack', 'no answer', 'ECONNRESET'), 'DELIVERY_UNKNOWN'],
    ['cannot take now', new ProviderTransientError('slack', '503 Service Unavailable'), 'PROVIDER_UNAVAILABLE'],
  ];
  for (const [what, error, code] of providerFailures) {
    it(`answers ${code} when the provider ${what} the edit, and leaves the record as it was`, async () => {
      const d = await deps();
      const posted = await send(d, POST);
      const before = await store.getDelivery(posted.id);
      slack.amendFailWith = error;
      expect((await failure(edit(d, caller(), posted.id, { text: 'Deploy 142 done' }))).code).toBe(code);
      expect(await store.getDelivery(posted.id)).toEqual(before);
    });
  }
});

describe('editing a send still waiting', () => {
  it('a scheduled SMS waits with the new body, and its release sends that body', async () => {
    const d = await deps();
    const scheduled = await send(d, { ...TEXT, send_at: iso(T0 + 60_000) });
    clock += 1_000;
    expect(await edit(d, caller(), scheduled.id, { text: 'Disk fuller' })).toEqual({
      id: scheduled.id,
      via: 'sms',
      status: 'scheduled',
      edited_at: iso(T0 + 1_000),
    });
    expect(await store.getOutboxEntry(scheduled.id)).toMatchObject({ state: 'scheduled', call: { body: 'Disk fuller' } });
    expect(sms.payloads).toEqual([]);
    clock = T0 + 60_000;
    expect(await releaseDue(d)).toEqual([{ id: scheduled.id, state: 'released' }]);
    expect(sms.payloads).toEqual([{ To: '+14155550123', Body: 'Disk fuller', From: '+14155550000' }]);
  });

  it("refuses a waiting send that has left (ALREADY_SENT) and another client's (NOT_FOUND); the release sent the old body", async () => {
    const d = await deps();
    const scheduled = await send(d, { ...TEXT, send_at: iso(T0 + 60_000) });
    expect((await failure(edit(d, caller('someone-else'), scheduled.id, { text: 'x' }))).code).toBe('NOT_FOUND');
    clock = T0 + 60_000;
    await releaseDue(d);
    // The release wrote its record: the edit now meets a handed-over SMS.
    expect((await failure(edit(d, caller(), scheduled.id, { text: 'too late' }))).code).toBe('ALREADY_SENT');
    expect(sms.payloads).toEqual([{ To: '+14155550123', Body: 'Disk full', From: '+14155550000' }]);
  });

  it('a send held for a person is put before them again with the new payload; the old hash decides nothing, the new one sends the new body', async () => {
    const d = await deps({ NOTIFY_APPROVAL: 'sms', NOTIFY_APPROVAL_MODE: 'console' });
    const held = await send(d, TEXT, { approval: { canAsk: false } });
    expect(held.status).toBe('pending_approval');
    const oldSha = (await store.getDelivery(held.id))!.approval!.payload_sha256;
    clock += 1_000;
    expect(await edit(d, caller(), held.id, { text: 'Disk fuller' })).toMatchObject({ status: 'pending_approval' });
    const row = (await store.getDelivery(held.id))!;
    expect(row).toMatchObject({ status: 'pending_approval', payload: { Body: 'Disk fuller' }, approval: { outcome: 'pending' } });
    expect(row.approval!.payload_sha256).toBe(payloadSha256(row.payload));
    expect(row.approval!.payload_sha256).not.toBe(oldSha);
    await failure(decideApproval(d, held.id, { decision: 'approve', by: 'ops', seenSha256: oldSha }));
    expect(sms.payloads).toEqual([]);
    await decideApproval(d, held.id, { decision: 'approve', by: 'ops', seenSha256: row.approval!.payload_sha256 });
    expect(sms.payloads).toEqual([{ To: '+14155550123', Body: 'Disk fuller', From: '+14155550000' }]);
  });

  it('an approved send still waiting (quiet hours) is taken back from the outbox and asked again; its release sends nothing', async () => {
    const consoleMode = { NOTIFY_APPROVAL: 'sms', NOTIFY_APPROVAL_MODE: 'console' };
    const held = await send(await deps(consoleMode), TEXT, { approval: { canAsk: false } });
    const sha = (await store.getDelivery(held.id))!.approval!.payload_sha256;
    // Quiet hours began while it waited for the person: the approved send waits for them to end.
    const d = await deps({ ...consoleMode, NOTIFY_QUIET_HOURS: 'sms=00:00-23:59@UTC' });
    const approved = await decideApproval(d, held.id, { decision: 'approve', by: 'ops', seenSha256: sha });
    expect(approved).toMatchObject({ status: 'approved', released: { state: 'held' } });
    expect(await edit(d, caller(), held.id, { text: 'Disk fuller' })).toMatchObject({ status: 'pending_approval' });
    expect(await store.getOutboxEntry(held.id)).toMatchObject({ state: 'cancelled' });
    expect(await store.getDelivery(held.id)).toMatchObject({ status: 'pending_approval', approval: { outcome: 'pending' } });
    // Past the quiet hours, with none configured: nothing is left to release.
    clock += 86_400_000;
    expect(await releaseDue(await deps(consoleMode))).toEqual([]);
    expect(sms.payloads).toEqual([]);
  });
});
