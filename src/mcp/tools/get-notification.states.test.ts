/**
 * get_notification, the read of where one notification stands: whose it shows (its own
 * client's, any to an operator, NOT_FOUND to anyone else, as for an unknown id), and, one row
 * per state reached through the pipeline kit (fake providers, a real SQLite store, a clock of
 * our own), the status, what it means on the channel, the provider's word, the attempts and
 * the times, each within the tool's output schema.
 */
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeProvider, FakeSlack, failure, openTempStore, pipelineDeps, SLACK_ENV, SMS_ENV } from '../../../test/helpers/pipeline-kit.js';
import type { Config } from '../../config/config.js';
import { silentLogger } from '../../core/log.js';
import { releaseDue } from '../../notification/outbox.js';
import { sendNotification, type PipelineDeps, type SendOptions } from '../../notification/pipeline.js';
import { retractNotification } from '../../notification/retract.js';
import { STATE_MEANINGS } from '../../notification/status.js';
import { applyReceipt } from '../../notification/status-receipt.js';
import { ProviderRejectedError } from '../../providers/errors.js';
import type { SqliteStore } from '../../store/sqlite/store.js';
import { getNotificationTool } from './get-notification.js';

const T0 = Date.UTC(2026, 5, 1, 12);
let clock: number;
let store: SqliteStore;
let sms: FakeProvider;
let slack: FakeSlack;

type Deps = PipelineDeps & { config: Config };
const deps = (env: Record<string, string> = {}): Promise<Deps> =>
  pipelineDeps({ store, providers: { sms, slack }, env: { ...SMS_ENV, ...SLACK_ENV, ...env }, now: () => clock });
const send = (d: PipelineDeps, call: Record<string, unknown>, opts: Partial<SendOptions> = {}) =>
  sendNotification(d, call.via as string, call, { client: 'bot', ...opts });
const iso = (ms: number) => new Date(ms).toISOString();
const sentMeans = (d: Deps, via: string) => d.config.channels.find((c) => c.name === via)!.channel.sentMeans;

const POST = { via: 'slack', channel: 'C0123ABCD', text: 'Deploy 142 started' };
const TEXT = { via: 'sms', to: '+14155550123', body: 'Disk full' };

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** get_notification as `client` (an operator's token when `operator`) calls it; the answer checked against the tool's output schema. */
async function read(d: Deps, id: string, client: string | null = 'bot', operator = false): Promise<Record<string, unknown>> {
  const tool = getNotificationTool(d.config.channels);
  const ctx = {
    store,
    config: d.config,
    log: silentLogger,
    client,
    operator,
    now: () => clock,
    signal: new AbortController().signal,
    deps: d,
  };
  const out = (await tool.handler({ id }, ctx)) as Record<string, unknown>;
  const validate = addFormats(new Ajv({ allErrors: true })).compile(tool.outputSchema);
  expect(validate(out), JSON.stringify(validate.errors)).toBe(true);
  return out;
}

beforeEach(async () => {
  clock = T0;
  store = await openTempStore('get');
  sms = new FakeProvider();
  slack = new FakeSlack();
});
afterEach(async () => store.close());

describe('get_notification: whose notification it shows', () => {
  const readers: Array<[string, string | null, boolean, boolean]> = [
    ['its own client', 'bot', false, true],
    ['an operator', 'ops', true, true],
    ['another client', 'someone-else', false, false],
    ['a client with no name', null, false, false],
  ];
  for (const [who, client, operator, sees] of readers) {
    it(`${who} ${sees ? 'reads' : 'gets NOT_FOUND for'} a sent notification and a waiting one`, async () => {
      const d = await deps();
      const sent = await send(d, TEXT);
      const waiting = await send(d, { ...TEXT, send_at: iso(T0 + 60_000) });
      for (const [id, status] of [
        [sent.id, 'sent'],
        [waiting.id, 'scheduled'],
      ] as const) {
        if (sees) expect(await read(d, id, client, operator)).toMatchObject({ id, status });
        else expect((await failure(read(d, id, client, operator))).code).toBe('NOT_FOUND');
      }
    });
  }

  it('an id that names nothing is NOT_FOUND, to an operator too', async () => {
    const d = await deps();
    expect((await failure(read(d, 'ntf_nothing'))).code).toBe('NOT_FOUND');
    expect((await failure(read(d, 'ntf_nothing', 'ops', true))).code).toBe('NOT_FOUND');
  });
});

interface Row {
  state: string;
  /** Brings a notification to the state; its id. */
  make: (d: Deps) => Promise<string>;
  /** What the answer holds (status_means: 'sent' means the channel's own sentence). */
  want: (d: Deps, id: string) => Record<string, unknown>;
  /** Properties the answer must not have. */
  absent?: string[];
}

const ROWS: Row[] = [
  {
    state: 'an SMS the provider took',
    make: async (d) => (await send(d, TEXT)).id,
    want: (d, id) => ({
      id,
      via: 'sms',
      status: 'sent',
      status_means: sentMeans(d, 'sms'),
      provider: 'fake',
      provider_message_id: 'fake-1',
      // The attempt's time is the clock's less the call's own (wall-clock) latency.
      attempts: [{ attempt: 1, outcome: 'sent', at: expect.any(String), latency_ms: expect.any(Number) }],
      accepted_at: iso(T0),
      updated_at: iso(T0),
    }),
    absent: ['provider_status', 'error_code', 'send_at', 'release_at', 'decided_by'],
  },
  {
    state: 'a Slack post',
    make: async (d) => (await send(d, POST)).id,
    want: (d) => ({
      via: 'slack',
      status: 'sent',
      status_means: sentMeans(d, 'slack'),
      provider: 'slack',
      provider_message_id: '1712345678.000101',
    }),
  },
  {
    state: 'an SMS its receipt says was undelivered',
    make: async (d) => {
      const { id } = await send(d, TEXT);
      clock += 9_000;
      await applyReceipt(d, 'sms', { providerMessageId: 'fake-1', event: 'undelivered', providerStatus: 'undelivered', code: '30003' });
      return id;
    },
    want: () => ({
      status: 'undelivered',
      status_means: STATE_MEANINGS.undelivered,
      provider_status: { status: 'undelivered', code: '30003', at: iso(T0 + 9_000) },
      accepted_at: iso(T0),
      updated_at: iso(T0 + 9_000),
    }),
  },
  {
    state: 'an SMS the provider refused',
    make: async (d) => {
      sms.failWith = new ProviderRejectedError('twilio', 'The To number is not a mobile number.', 21614);
      await failure(send(d, TEXT));
      return (await store.listDeliveries(1))[0]!.id;
    },
    want: () => ({
      status: 'failed',
      status_means: STATE_MEANINGS.failed,
      error_code: 'PROVIDER_REJECTED',
      attempts: [expect.objectContaining({ attempt: 1, vendor_code: '21614' })],
    }),
    absent: ['provider_message_id'],
  },
  {
    state: 'a scheduled send',
    make: async (d) => (await send(d, { ...TEXT, send_at: iso(T0 + 60_000) })).id,
    want: () => ({
      status: 'scheduled',
      status_means: STATE_MEANINGS.scheduled,
      provider: 'none yet',
      attempts: [],
      send_at: iso(T0 + 60_000),
      accepted_at: iso(T0),
    }),
    absent: ['release_at', 'provider_message_id'],
  },
  {
    state: 'a send held by quiet hours',
    make: async (d) => (await send(await deps({ NOTIFY_QUIET_HOURS: 'sms=11:00-13:00@UTC' }), TEXT)).id,
    want: () => ({ status: 'held', status_means: STATE_MEANINGS.held, provider: 'none yet', release_at: iso(Date.UTC(2026, 5, 1, 13)) }),
    absent: ['send_at'],
  },
  {
    state: 'a scheduled send released at its time',
    make: async (d) => {
      const { id } = await send(d, { ...TEXT, send_at: iso(T0 + 60_000) });
      clock = T0 + 60_000;
      await releaseDue(d);
      return id;
    },
    want: (d) => ({
      status: 'sent',
      status_means: sentMeans(d, 'sms'),
      provider: 'fake',
      send_at: iso(T0 + 60_000),
      updated_at: iso(T0 + 60_000),
    }),
    absent: ['release_at'],
  },
  {
    state: 'a scheduled send retracted',
    make: async (d) => {
      const { id } = await send(d, { ...TEXT, send_at: iso(T0 + 60_000) });
      clock += 2_000;
      await retractNotification(d, { client: 'bot', operator: false, signal: new AbortController().signal }, id);
      return id;
    },
    want: () => ({ status: 'cancelled', status_means: STATE_MEANINGS.cancelled, attempts: [], updated_at: iso(T0 + 2_000) }),
  },
  {
    state: 'a send held for a person',
    make: async (d) =>
      (await send(await deps({ NOTIFY_APPROVAL: 'sms', NOTIFY_APPROVAL_MODE: 'console' }), TEXT, { approval: { canAsk: false } })).id,
    want: () => ({ status: 'pending_approval', status_means: STATE_MEANINGS.pending_approval, attempts: [] }),
    absent: ['decided_by', 'decided_at', 'provider_message_id'],
  },
];

describe('get_notification: where a notification stands, by state', () => {
  for (const row of ROWS) {
    it(`${row.state}`, async () => {
      const d = await deps();
      const id = await row.make(d);
      const out = await read(d, id);
      expect(out).toMatchObject({ id, ...row.want(d, id) });
      for (const key of row.absent ?? []) expect(out).not.toHaveProperty(key);
    });
  }
});
