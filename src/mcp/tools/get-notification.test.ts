/** get_notification on a held send's decision: who, when and why, as the record holds them, within its output schema. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { delivery } from '../../../test/store/suite.js';
import { loadConfig } from '../../config/config.js';
import { silentLogger } from '../../core/log.js';
import { openSqliteStore, type SqliteStore } from '../../store/sqlite/store.js';
import { waitingEntry, type ApprovalRecord } from '../../store/types.js';
import type { ToolContext } from '../tool-kit.js';
import { getNotificationTool } from './get-notification.js';

const T0 = Date.UTC(2026, 5, 1, 12);
let dir: string;
let store: SqliteStore;
let ctx: ToolContext;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'notify-get-'));
  store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
  const config = loadConfig({ NOTIFY_DATA_DIR: dir });
  ctx = {
    store,
    config,
    log: silentLogger,
    client: 'bot',
    now: () => T0,
    signal: new AbortController().signal,
    deps: { config, store, channels: [], log: silentLogger, now: () => T0 },
  };
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('get_notification: the decision on a held send', () => {
  const tool = () => getNotificationTool(ctx.config.channels);
  const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
  const held = (id: string, status: 'declined' | 'expired' | 'sent', approval: ApprovalRecord) =>
    store.writeRecord(delivery(id, T0, { status, client: 'bot', approval, attempt_log: [] }));

  it('shows who declined, when and why; an expiry its time alone; an answer in the client (ask mode) neither', async () => {
    const base = { reasons: ['all'], payload_sha256: 'a'.repeat(64) };
    await held('ntf_declined', 'declined', {
      ...base,
      outcome: 'declined',
      decided_by: 'ops',
      decided_at: T0 + 5_000,
      reason: 'wrong list',
    });
    await held('ntf_expired', 'expired', { ...base, outcome: 'expired', decided_at: T0 + 86_400_000 });
    await held('ntf_asked', 'sent', { ...base, outcome: 'approved' });
    const validate = addFormats(new Ajv({ allErrors: true })).compile(tool().outputSchema!);
    const read = async (id: string) => {
      const out = (await tool().handler({ id }, ctx)) as Record<string, unknown>;
      expect(validate(out), JSON.stringify(validate.errors)).toBe(true);
      return out;
    };
    expect(await read('ntf_declined')).toMatchObject({
      status: 'declined',
      decided_by: 'ops',
      decided_at: new Date(T0 + 5_000).toISOString(),
      reason: 'wrong list',
    });
    const expired = await read('ntf_expired');
    expect(expired).toMatchObject({ status: 'expired', decided_at: new Date(T0 + 86_400_000).toISOString() });
    expect(expired).not.toHaveProperty('decided_by');
    const asked = await read('ntf_asked');
    for (const key of ['decided_by', 'decided_at', 'reason']) expect(asked).not.toHaveProperty(key);
  });

  it('a release that left but whose record was lost reads as its release answered, not as scheduled', async () => {
    const entry = waitingEntry({
      id: 'ntf_lost',
      via: 'sms',
      client: 'bot',
      call: { via: 'sms', to: '+14155550123', body: 'x' },
      state: 'scheduled',
      send_at: T0,
      due_at: T0,
      created_at: T0 - 1_000,
    });
    await store.scheduleSend(entry);
    await store.claimDue(T0, { limit: 1, owner: 'o', leaseMs: 60_000, graceMs: 3_600_000 });
    await store.finishRelease(
      'ntf_lost',
      'o',
      'released',
      { id: 'ntf_lost', via: 'sms', status: 'sent', provider: 'twilio', accepted_at: new Date(T0).toISOString() },
      T0 + 1,
    );
    const out = (await tool().handler({ id: 'ntf_lost' }, ctx)) as Record<string, unknown>;
    expect(out).toMatchObject({ id: 'ntf_lost', status: 'sent' });
  });
});
