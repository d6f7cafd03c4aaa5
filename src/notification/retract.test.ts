/**
 * Taking a notification back (./retract.ts), with the kit's fake providers, a real SQLite
 * store and a clock of our own: one row per state a notification can be in, what the retract
 * answers, where it leaves the record, and whether the provider's delete was called; then
 * the sends still waiting in the outbox, whose, and a provider that fails the delete.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeProvider, FakeSlack, failure, openTempStore, pipelineDeps, SLACK_ENV, SMS_ENV } from '../../test/helpers/pipeline-kit.js';
import { DeliveryUnknownError, ProviderRejectedError, ProviderTransientError } from '../providers/errors.js';
import type { SqliteStore } from '../store/sqlite/store.js';
import type { DeliveryStatus } from '../store/types.js';
import { decideApproval } from './decide-approval.js';
import { releaseDue } from './outbox.js';
import type { Caller } from './own.js';
import { sendNotification, type PipelineDeps, type SendOptions } from './pipeline.js';
import { retractNotification } from './retract.js';
import { applyReceipt } from './status-receipt.js';

const T0 = Date.UTC(2026, 5, 1, 12);
let clock: number;
let store: SqliteStore;
let sms: FakeProvider;
let slack: FakeSlack;

const CONSOLE = { NOTIFY_APPROVAL: 'sms', NOTIFY_APPROVAL_MODE: 'console' };
const deps = (env: Record<string, string> = {}): Promise<PipelineDeps> =>
  pipelineDeps({ store, providers: { sms, slack }, env: { ...SMS_ENV, ...SLACK_ENV, ...env }, now: () => clock });
const caller = (client: string | null = 'bot', operator = false): Caller => ({ client, operator, signal: new AbortController().signal });
const send = (d: PipelineDeps, call: Record<string, unknown>, opts: Partial<SendOptions> = {}) =>
  sendNotification(d, call.via as string, call, { client: 'bot', ...opts });
const iso = (ms: number) => new Date(ms).toISOString();
const shaOf = async (id: string) => (await store.getDelivery(id))!.approval!.payload_sha256;

const POST = { via: 'slack', channel: 'C0123ABCD', text: 'Deploy 142 started' };
const TEXT = { via: 'sms', to: '+14155550123', body: 'Disk full' };

beforeEach(async () => {
  clock = T0;
  store = await openTempStore('retract');
  sms = new FakeProvider();
  slack = new FakeSlack();
});
afterEach(async () => store.close());

interface Row {
  state: string;
  /** Makes the notification as the state says; its id. */
  make: () => Promise<string>;
  /** Taken back: the answer's and the record's status. */
  taken?: { answer: DeliveryStatus; record: DeliveryStatus };
  /** Refused: the code, what the message says, and the record left as it was. */
  refused?: { code: string; why: RegExp };
  /** chat.delete calls the retract makes. */
  deletes: number;
}

const ROWS: Row[] = [
  {
    state: 'a Slack post that stands',
    make: async () => (await send(await deps(), POST)).id,
    taken: { answer: 'retracted', record: 'retracted' },
    deletes: 1,
  },
  {
    state: 'a dry run',
    make: async () =>
      (await send(await pipelineDeps({ store, providers: {}, env: { NOTIFY_SLACK_ALLOW: '*' }, now: () => clock }), POST)).id,
    taken: { answer: 'retracted', record: 'retracted' },
    deletes: 0,
  },
  {
    state: 'a send held for a person',
    make: async () => (await send(await deps(CONSOLE), TEXT, { approval: { canAsk: false } })).id,
    taken: { answer: 'cancelled', record: 'cancelled' },
    deletes: 0,
  },
  {
    state: 'an SMS handed over',
    make: async () => (await send(await deps(), TEXT)).id,
    refused: { code: 'ALREADY_SENT', why: /this sms was handed to its provider and cannot be taken back/ },
    deletes: 0,
  },
  {
    state: 'an SMS delivered',
    make: async () => {
      const d = await deps();
      const { id } = await send(d, TEXT);
      await applyReceipt(d, 'sms', { providerMessageId: 'fake-1', event: 'delivered', providerStatus: 'delivered', code: null });
      return id;
    },
    refused: { code: 'ALREADY_SENT', why: /this sms is delivered at its provider/ },
    deletes: 0,
  },
  {
    state: 'a post that failed',
    make: async () => {
      slack.failWith = new ProviderRejectedError('slack', 'channel_not_found', 'channel_not_found');
      await failure(send(await deps(), POST));
      slack.failWith = undefined;
      return (await store.listDeliveries(1))[0]!.id;
    },
    refused: { code: 'INVALID_FIELD', why: /it failed, so nothing was sent/ },
    deletes: 0,
  },
  {
    state: 'a post retracted already',
    make: async () => {
      const { id } = await send(await deps(), POST);
      await retractNotification(await deps(), caller(), id);
      slack.retracts.length = 0;
      return id;
    },
    refused: { code: 'INVALID_FIELD', why: /it was retracted already/ },
    deletes: 0,
  },
  {
    state: 'a send a person declined',
    make: async () => {
      const d = await deps(CONSOLE);
      const { id } = await send(d, TEXT, { approval: { canAsk: false } });
      await decideApproval(d, id, { decision: 'decline', by: 'ops', seenSha256: await shaOf(id) });
      return id;
    },
    refused: { code: 'INVALID_FIELD', why: /it was declined/ },
    deletes: 0,
  },
  {
    state: 'a send a person approved, waiting for quiet hours to end',
    make: async () => {
      const { id } = await send(await deps(CONSOLE), TEXT, { approval: { canAsk: false } });
      const quiet = await deps({ ...CONSOLE, NOTIFY_QUIET_HOURS: 'sms=00:00-23:59@UTC' });
      expect(await decideApproval(quiet, id, { decision: 'approve', by: 'ops', seenSha256: await shaOf(id) })).toMatchObject({
        status: 'approved',
        released: { state: 'held' },
      });
      return id;
    },
    refused: { code: 'ALREADY_SENT', why: /a person approved it and it is leaving/ },
    deletes: 0,
  },
];

describe('retracting a notification, by the state it is in', () => {
  for (const row of ROWS) {
    const outcome = row.taken ? `${row.taken.answer}` : `${row.refused!.code}`;
    it(`${row.state}: ${outcome}`, async () => {
      const id = await row.make();
      const before = await store.getDelivery(id);
      clock += 7_000;
      const d = await deps();
      if (row.taken) {
        expect(await retractNotification(d, caller(), id)).toEqual({
          id,
          via: before!.via,
          status: row.taken.answer,
          retracted_at: iso(clock),
        });
        expect(await store.getDelivery(id)).toMatchObject({
          status: row.taken.record,
          payload: before!.payload,
          provider_status: 'deleted',
          status_updated_at: clock,
        });
      } else {
        const err = await failure(retractNotification(d, caller(), id));
        expect(err.code).toBe(row.refused!.code);
        expect(err.message).toMatch(row.refused!.why);
        expect(await store.getDelivery(id)).toEqual(before);
      }
      expect(slack.retracts).toHaveLength(row.deletes);
    });
  }

  it("hands chat.delete the post as recorded, by the conversation its post answered; another client's id is NOT_FOUND, an operator's retract goes", async () => {
    slack = new FakeSlack(() => ({ providerMessageId: '1712345678.000900', conversation: 'C0DEPLOYS' }));
    const d = await deps();
    const posted = await send(d, { ...POST, channel: '#deploys' });
    expect((await failure(retractNotification(d, caller('someone-else'), posted.id))).code).toBe('NOT_FOUND');
    expect((await failure(retractNotification(d, caller(), 'ntf_nothing'))).code).toBe('NOT_FOUND');
    expect(slack.retracts).toEqual([]);
    expect(await retractNotification(d, caller('ops', true), posted.id)).toMatchObject({ status: 'retracted' });
    expect(slack.retracts).toEqual([{ payload: slack.payloads[0], providerMessageId: '1712345678.000900', conversation: 'C0DEPLOYS' }]);
    expect(slack.payloads[0]).toMatchObject({ channel: '#deploys' });
  });

  it('a send held for a person and withdrawn can no longer be approved: nothing is sent', async () => {
    const d = await deps(CONSOLE);
    const { id } = await send(d, TEXT, { approval: { canAsk: false } });
    const sha = await shaOf(id);
    await retractNotification(d, caller(), id);
    expect((await failure(decideApproval(d, id, { decision: 'approve', by: 'ops', seenSha256: sha }))).code).toBe('INVALID_FIELD');
    expect(sms.payloads).toEqual([]);
  });

  const providerFailures: Array<[string, Error, string]> = [
    ['refuses', new ProviderRejectedError('slack', 'message_not_found', 'message_not_found'), 'PROVIDER_REJECTED'],
    ['may have taken', new DeliveryUnknownError('slack', 'no answer', 'ECONNRESET'), 'DELIVERY_UNKNOWN'],
    ['cannot take now', new ProviderTransientError('slack', '503 Service Unavailable'), 'PROVIDER_UNAVAILABLE'],
  ];
  for (const [what, error, code] of providerFailures) {
    it(`answers ${code} when the provider ${what} the deletion, and leaves the post standing in the record`, async () => {
      const d = await deps();
      const posted = await send(d, POST);
      const before = await store.getDelivery(posted.id);
      slack.amendFailWith = error;
      const err = await failure(retractNotification(d, caller(), posted.id));
      expect(err.code).toBe(code);
      expect(err.message).toContain('deletion');
      expect(await store.getDelivery(posted.id)).toEqual(before);
    });
  }
});

describe('retracting a send still waiting in the outbox', () => {
  it('cancels a scheduled send, which its time then does not send; a second retract says it is cancelled already', async () => {
    const d = await deps();
    const scheduled = await send(d, { ...TEXT, send_at: iso(T0 + 60_000) });
    expect((await failure(retractNotification(d, caller('someone-else'), scheduled.id))).code).toBe('NOT_FOUND');
    clock += 1_000;
    expect(await retractNotification(d, caller(), scheduled.id)).toEqual({
      id: scheduled.id,
      via: 'sms',
      status: 'cancelled',
      retracted_at: iso(T0 + 1_000),
    });
    expect(await store.getOutboxEntry(scheduled.id)).toMatchObject({ state: 'cancelled' });
    clock = T0 + 60_000;
    expect(await releaseDue(d)).toEqual([]);
    expect(sms.payloads).toEqual([]);
    const again = await failure(retractNotification(d, caller(), scheduled.id));
    expect(again).toMatchObject({ code: 'INVALID_FIELD', message: expect.stringMatching(/it is cancelled already/) });
  });

  it('an operator cancels a waiting send of another client', async () => {
    const d = await deps();
    const scheduled = await send(d, { ...TEXT, send_at: iso(T0 + 60_000) });
    expect(await retractNotification(d, caller('ops', true), scheduled.id)).toMatchObject({ status: 'cancelled' });
    expect(await store.getOutboxEntry(scheduled.id)).toMatchObject({ state: 'cancelled' });
  });

  it('refuses a waiting send that expired unsent (INVALID_FIELD), and one released since (ALREADY_SENT, as the SMS it became)', async () => {
    const d = await deps({ NOTIFY_SCHEDULE_GRACE_S: '60' });
    const late = await send(d, { ...TEXT, send_at: iso(T0 + 60_000) });
    clock = T0 + 60_000 + 61_000;
    expect(await releaseDue(d)).toEqual([{ id: late.id, state: 'expired' }]);
    expect(await failure(retractNotification(d, caller(), late.id))).toMatchObject({
      code: 'INVALID_FIELD',
      message: expect.stringMatching(/it is expired already/),
    });
    const onTime = await send(d, { ...TEXT, send_at: iso(clock + 1_000) });
    clock += 1_000;
    expect(await releaseDue(d)).toEqual([{ id: onTime.id, state: 'released' }]);
    expect((await failure(retractNotification(d, caller(), onTime.id))).code).toBe('ALREADY_SENT');
    expect(sms.payloads).toHaveLength(1);
  });
});
