/**
 * Scheduled sends across two real processes (`notify-mcp worker`) sharing one store, on one
 * SQLite file and on PostgreSQL (a fresh schema; required when DATABASE_URL is set, else
 * skipped with a message when it does not answer): 2,000 live emails to a real SMTP peer,
 * all due in the same second; one worker is SIGKILLed mid-release. Every entry ends sent
 * (`released`, its mail received exactly once) or `unknown` (received at most once); none
 * is sent twice, none is lost, none is left waiting.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { waitingEntry, type OutboxEntry, type Store } from '../../src/store/types.js';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { PG_URL, postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';
import { workerPool } from '../helpers/workers.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const pgSkip = await postgresSkipReason('schedule-replicas');
const N = 2_000;

let smtp: TestSmtpServer;
const workers = workerPool();
/** The workers' last log lines, for a failure's message. */

beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  workers.killAll();
  await smtp?.close();
});

function entry(i: number, due: number, tag: string): OutboxEntry {
  return waitingEntry({
    id: `ntf_${tag}_${String(i).padStart(5, '0')}`,
    via: 'email',
    client: 'scale',
    call: { via: 'email', to: `r${i}@example.com`, subject: `scheduled ${i}`, body_html: `<p>${i}</p>` },
    state: 'scheduled',
    send_at: due,
    due_at: due,
    created_at: Date.now(),
  });
}

async function run(engine: string, storeEnv: Record<string, string>, open: () => Promise<Store>): Promise<void> {
  const env = cliEnv({
    ...storeEnv,
    SMTP_URL: smtp.url,
    EMAIL_FROM: 'notify-mcp <alerts@notify.test>',
    NOTIFY_EMAIL_ALLOW: 'example.com',
    // A short budget makes the lease of a killed worker's releases short (2 x budget + 1 s).
    NOTIFY_SEND_BUDGET_MS: '4000',
    NOTIFY_SCHEDULE_POLL_S: '1',
    NOTIFY_PROVIDER_CONCURRENCY: '10',
    NOTIFY_LOG_LEVEL: 'warn',
  });
  const store = await open();
  try {
    const tag = `${engine}${Date.now().toString(36)}`;
    const due = Date.now() + 4_000;
    const t0 = Date.now();
    // A hundred at a time: 2,000 round trips one after another took most of the test's time at load 15.
    for (let i = 0; i < N; i += 100) await Promise.all(Array.from({ length: 100 }, (_, j) => store.scheduleSend(entry(i + j, due, tag))));
    const phases = { scheduled_ms: Date.now() - t0, first_mails_ms: 0, drained_ms: 0 };
    const before = smtp.received.length;
    const a = workers.start(env);
    const b = workers.start(env);
    await workers.until('the first mails', () => smtp.received.length - before >= 200, 60_000);
    phases.first_mails_ms = Date.now() - t0;
    a.kill('SIGKILL');
    const waiting = async () => (await store.listOutbox(['scheduled', 'held', 'releasing'], 10)).length;
    await workers.until('every entry to leave the outbox', async () => (await waiting()) === 0, 150_000);
    phases.drained_ms = Date.now() - t0;
    b.kill('SIGTERM');
    await new Promise((r) => (b.exitCode !== null ? r(null) : b.once('exit', r)));

    const mine = smtp.received.slice(before);
    const perId = new Map<string, number>();
    for (const m of mine) {
      const id = /X-Notification-Id: (ntf_\S+)/i.exec(m.raw)?.[1];
      if (id) perId.set(id, (perId.get(id) ?? 0) + 1);
    }
    const entries = await store.listOutbox(['released', 'unknown', 'failed', 'expired', 'cancelled'], N * 2);
    const ours = entries.filter((e) => e.id.includes(tag));
    expect(ours.length).toBe(N);
    const states = new Map<string, number>();
    for (const e of ours) states.set(e.state, (states.get(e.state) ?? 0) + 1);
    // Sent at most once, each.
    expect([...perId.values()].filter((n) => n > 1)).toEqual([]);
    // All sent or unknown; none lost.
    expect([...states.keys()].filter((s) => s !== 'released' && s !== 'unknown')).toEqual([]);
    for (const e of ours) {
      if (e.state === 'released') expect(perId.get(e.id), e.id).toBe(1);
      if (e.state === 'unknown') {
        expect(await store.getDelivery(e.id), e.id).toMatchObject({ status: 'unknown' });
        expect(perId.get(e.id) ?? 0).toBeLessThanOrEqual(1);
      }
    }
    process.stderr.write(
      `schedule-replicas ${engine}: ${JSON.stringify(Object.fromEntries(states))}, mails ${mine.length}, ${JSON.stringify(phases)}\n`,
    );
  } finally {
    await store.close();
  }
}

// Each test's timeout covers its own waits (60 s for the first mails, 150 s for the rest) with
// room for scheduling and the checks, so that a slow phase fails with its own message and the
// workers' last lines, not a bare timeout (at load 15 the PostgreSQL case once passed 240 s).
describe('2,000 scheduled sends due at once, two workers, one SIGKILLed mid-release', () => {
  it('on one SQLite file', { timeout: 300_000 }, async () => {
    const dir = tempDataDir('notify-schedule-replicas-');
    try {
      await run('sqlite', { NOTIFY_DATA_DIR: dir }, () => openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(pgSkip !== null)('on PostgreSQL', { timeout: 300_000 }, async () => {
    const shared = await sharedPostgresSchema('schedule_replicas');
    try {
      await run('postgres', shared.env, () => openPostgresStore({ connectionString: PG_URL, schema: shared.schema, log: silentLogger }));
    } finally {
      await shared.close();
    }
  });
});
