/**
 * Nothing is "may have started" before it started (the reliability issue's fourth class), on
 * SQLite and PostgreSQL: a release process whose sends wait for a provider slot (one request
 * in flight, the rest queued) has marked only the one in flight `sending`. When it dies,
 * another process takes the releases over after their lease: the one in flight is
 * `unknown`, the queued ones are sent, once each; and the dead process's queued sends, if it
 * was only stalled, find their claims taken and send nothing.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { connectChannels } from '../../src/channels/connect.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { silentLogger } from '../../src/core/log.js';
import { leaseMs, releaseDue } from '../../src/notification/outbox.js';
import { sendNotification, type PipelineDeps } from '../../src/notification/pipeline.js';
import { Slots } from '../../src/providers/slots.js';
import type { Provider, SendContext } from '../../src/providers/types.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { PG_URL, postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';

const pgSkip = await postgresSkipReason('queued-not-started');

/** Twilio as the adapters use it: one slot, the request written once it holds it; requests hang until `open()`. */
class SlottedProvider implements Provider<{ To: string; Body: string }> {
  readonly name = 'twilio';
  readonly callsStarting = true;
  readonly reached: string[] = [];
  private readonly slots = new Slots('twilio', 1);
  private gate: Promise<void> | undefined;
  open!: () => void;
  constructor(hang: boolean) {
    if (hang) this.gate = new Promise((r) => (this.open = r));
  }
  send(payload: { To: string; Body: string }, ctx: SendContext) {
    return this.slots.run(ctx, async () => {
      this.reached.push(ctx.notificationId);
      await this.gate;
      return { providerMessageId: `SM${ctx.notificationId}` };
    });
  }
}

async function deps(store: Store, provider: Provider<unknown>, now: () => number): Promise<PipelineDeps & { config: Config }> {
  const config = loadConfig({
    NOTIFY_DATA_DIR: '/unused',
    TWILIO_ACCOUNT_SID: 'AC0',
    TWILIO_AUTH_TOKEN: 'secret',
    TWILIO_FROM: '+14155550000',
    NOTIFY_SMS_ALLOW: '+1415',
  });
  return { config, store, channels: await connectChannels(config, silentLogger, { sms: provider }), log: silentLogger, now };
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
}

async function scenario(open: () => Promise<Store>, phases: () => Promise<string[]>): Promise<void> {
  const [storeA, storeB] = [await open(), await open()];
  let clock = Date.now();
  const stalled = new SlottedProvider(true);
  const survivor = new SlottedProvider(false);
  try {
    const a = await deps(storeA, stalled as Provider<unknown>, () => clock);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await sendNotification(
        a,
        'sms',
        { via: 'sms', to: `+1415555010${i}`, body: `queued ${i}`, send_at: new Date(clock + 1_000).toISOString() },
        { client: 'bot' },
      );
      ids.push(r.id);
    }
    clock += 1_000;
    // Process A claims all four; one request is in flight, three wait for the slot. Then it stalls for good.
    void releaseDue(a);
    await until(() => stalled.reached.length === 1);
    let seen: string[] = [];
    for (let i = 0; i < 200 && seen.length < 4; i++) {
      seen = await phases();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(seen.sort()).toEqual(['claimed', 'claimed', 'claimed', 'sending']);

    // Past the lease, process B takes the four releases over.
    const b = await deps(storeB, survivor as Provider<unknown>, () => clock + leaseMs(a) + 1);
    const released = await releaseDue(b);
    const inFlight = stalled.reached[0]!;
    expect(released.find((r) => r.id === inFlight)).toMatchObject({ state: 'unknown', code: 'DELIVERY_UNKNOWN' });
    expect(
      released
        .filter((r) => r.state === 'released')
        .map((r) => r.id)
        .sort(),
    ).toEqual(ids.filter((id) => id !== inFlight).sort());
    expect(survivor.reached.sort()).toEqual(ids.filter((id) => id !== inFlight).sort());

    // A wakes up: its queued sends find their claims taken over and write nothing.
    stalled.open();
    await new Promise((r) => setTimeout(r, 300));
    expect(stalled.reached).toEqual([inFlight]);
  } finally {
    stalled.open?.();
    await storeA.close();
    await storeB.close();
  }
}

describe('a send queued for a provider slot has not started', () => {
  it('SQLite: a stalled release leaves its queued sends claimable, and another process sends them once', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'queued-')), 'notify.db');
    const phases = async () => {
      const db = new Database(file, { readonly: true });
      try {
        return (db.prepare("SELECT phase FROM idempotency_keys WHERE key LIKE '%outbox:%'").all() as { phase: string }[]).map(
          (r) => r.phase,
        );
      } finally {
        db.close();
      }
    };
    await scenario(() => openSqliteStore({ file, log: silentLogger }), phases);
  });

  it.skipIf(pgSkip !== null)(
    'PostgreSQL: a stalled release leaves its queued sends claimable, and another replica sends them once',
    async () => {
      const shared = await sharedPostgresSchema('queued');
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        const phases = async () =>
          (await client.query(`SELECT phase FROM ${shared.schema}.idempotency_keys WHERE key LIKE '%outbox:%'`)).rows.map(
            (r: { phase: string }) => r.phase,
          );
        await scenario(() => openPostgresStore({ connectionString: PG_URL, schema: shared.schema, log: silentLogger }), phases);
      } finally {
        await client.end();
        await shared.close();
      }
    },
  );
});
