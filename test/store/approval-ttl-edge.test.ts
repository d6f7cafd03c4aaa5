/**
 * An approved keyed send at its key's expiry, on SQLite and on PostgreSQL (a fresh schema;
 * required when DATABASE_URL is set): many identical calls from a client that cannot ask a
 * person race across the edge, under a clock that moves on every reading. Each call is a
 * replay (before the edge) or a fresh send that needs approval (after it), never a fresh
 * send that skipped the question: exactly one provider call per approval, and no sent record
 * without its approval.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { connectChannels } from '../../src/channels/connect.js';
import { loadConfig } from '../../src/config/config.js';
import { NotifyError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { isApprovalAsk, type ApprovalRound } from '../../src/notification/approval.js';
import { IDEMPOTENCY_TTL_MS } from '../../src/notification/idempotency.js';
import { sendNotification, sendOrAsk, type PipelineDeps, type SendResult } from '../../src/notification/pipeline.js';
import type { Provider } from '../../src/providers/types.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { PG_URL, postgresSkipReason } from '../helpers/postgres.js';

const pgSkip = await postgresSkipReason('approval-ttl-edge');

class CountingProvider implements Provider<unknown> {
  readonly name = 'fake';
  calls = 0;
  async send() {
    this.calls += 1;
    return { providerMessageId: `fake-${this.calls}` };
  }
}

interface Opened {
  store: Store;
  close(): Promise<void>;
}

async function sqlite(): Promise<Opened> {
  const dir = mkdtempSync(join(tmpdir(), 'approval-edge-'));
  const store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
  return { store, close: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
}

async function postgres(): Promise<Opened> {
  const schema = `notify_edge_${randomBytes(6).toString('hex')}`;
  const store = await openPostgresStore({ connectionString: PG_URL, schema, log: silentLogger });
  return {
    store,
    async close() {
      await store.close();
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}

const STORES = [
  { name: 'SQLite', open: sqlite, skip: null },
  { name: 'PostgreSQL', open: postgres, skip: pgSkip },
] as const;

/** Where the key's expiry falls, counted in clock readings from the burst's start. */
const EDGES = 32;
const CALLS = 8;
const T0 = 1_800_000_000_000;

describe('an approved key at its expiry', () => {
  for (const { name, open, skip } of STORES) {
    it.skipIf(skip !== null)(
      `${name}: calls that cannot ask replay or are refused, never send unapproved${skip ? ` [skipped: ${skip}]` : ''}`,
      async () => {
        const { store, close } = await open();
        try {
          const provider = new CountingProvider();
          const config = loadConfig({
            NOTIFY_DATA_DIR: '/unused',
            TWILIO_ACCOUNT_SID: 'AC0',
            TWILIO_AUTH_TOKEN: 'secret',
            TWILIO_FROM: '+14155550000',
            NOTIFY_SMS_ALLOW: '+1415',
            NOTIFY_APPROVAL: 'sms',
          });
          let t = T0;
          let ticking = false;
          const deps: PipelineDeps = {
            config,
            store,
            channels: await connectChannels(config, silentLogger, { sms: provider }),
            log: silentLogger,
            now: () => (ticking ? t++ : t),
          };
          const send = (call: Record<string, unknown>, approval: ApprovalRound) =>
            sendOrAsk(deps, 'sms', call, { client: 'bot', approval });

          const outcomes: Record<string, number> = {};
          for (let edge = 0; edge < EDGES; edge++) {
            const call = { via: 'sms', to: '+14155550123', body: 'Wire transfer reminder', idempotency_key: `edge-${edge}` };
            // A person approves the send under its key, at T0 (the clock stands still).
            ticking = false;
            t = T0;
            const asked = await send(call, { canAsk: true });
            if (!isApprovalAsk(asked)) throw new Error(`edge ${edge}: not asked`);
            const grant = asked.request.grant;
            const approved = await send(call, { canAsk: true, previous: { grant, answer: 'accept' } });
            expect(approved).toMatchObject({ id: grant.id, status: 'sent' });

            // A day later, `edge` clock readings before the key expires: a burst from a client
            // that cannot ask, each reading a millisecond later than the one before.
            t = T0 + IDEMPOTENCY_TTL_MS - edge;
            ticking = true;
            const results = await Promise.all(
              Array.from({ length: CALLS }, () =>
                sendNotification(deps, 'sms', call, { client: 'bot' }).then(
                  (r: SendResult) => (r.replayed === true && r.id === grant.id ? 'replayed' : `sent ${r.id}`),
                  (e: unknown) => (e instanceof NotifyError ? e.code : String(e)),
                ),
              ),
            );
            for (const r of results) outcomes[r] = (outcomes[r] ?? 0) + 1;
            expect(provider.calls, `edge ${edge}: ${JSON.stringify(results)}`).toBe(edge + 1);
          }
          // Both sides of the edge were reached.
          expect(Object.keys(outcomes).sort()).toEqual(['APPROVAL_REQUIRED', 'replayed']);
          const sent = (await store.listDeliveries(10_000)).filter((r) => r.status === 'sent');
          expect(sent).toHaveLength(EDGES);
          for (const r of sent) expect(r.approval, r.id).toMatchObject({ outcome: 'approved' });
        } finally {
          await close();
        }
      },
    );
  }
});
