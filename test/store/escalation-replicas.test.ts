/**
 * Escalation steps across two real processes (`notify-mcp worker`) sharing one store, on one
 * SQLite file and on PostgreSQL (a fresh schema; skipped with a message when it does not
 * answer): 40 escalations of two live SMS steps each, all due in the same second, a third of
 * them answered in that second from a third process; one worker is SIGKILLed at the due
 * second, while Twilio (a fake that answers slowly) has requests in flight. Nothing is sent
 * twice; every step ends sent (`released`, its SMS received once), `cancelled` (none
 * received) or `unknown` (at most one received), and none is left waiting. A step the killed
 * worker had claimed is taken over by the survivor within its lease plus 2 s (read from the
 * audit chain: each claim is an `outbox.releasing` entry with its time).
 */
import { createServer, type Server } from 'node:http';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { sendEscalating } from '../../src/notification/escalate.js';
import type { SendResult } from '../../src/notification/pipeline.js';
import { answerQuestion } from '../../src/notification/answer.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { listenOnLoopback } from '../helpers/fakes.js';
import { pipelineDeps } from '../helpers/pipeline-kit.js';
import { PG_URL, postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';
import { workerPool } from '../helpers/workers.js';

const pgSkip = await postgresSkipReason('escalation-replicas');
const N = 40;
const SID = 'AC' + '1'.repeat(32);
const POLICY = 'page=sms:+14155550100@4s,sms:+14155550101@4s';

/** Twilio, slowly: each request is recorded as it arrives and answered 400 ms later, so a kill finds some in flight. */
let twilio: { origin: string; close(): Promise<void> };
const bodies: { to: string; body: string }[] = [];
const workers = workerPool();

beforeAll(async () => {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      bodies.push({ to: form.get('To') ?? '', body: form.get('Body') ?? '' });
      setTimeout(() => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ sid: `SM${String(bodies.length).padStart(32, '0')}`, status: 'queued' }));
      }, 400);
    });
  });
  twilio = await listenOnLoopback(server);
});
afterAll(async () => {
  workers.killAll();
  await twilio?.close();
});

/** 2 × NOTIFY_SEND_BUDGET_MS + 1 s (src/notification/outbox.ts leaseMs). */
const LEASE_MS = 2 * 3_000 + 1_000;

/** For each claim that took over another's (a second `outbox.releasing` of one entry), how long after the first claim's lease ended. */
async function takeoverLateness(store: Store, leaseMs: number): Promise<number[]> {
  const claims = new Map<string, number[]>();
  for (let after = 0; ; ) {
    const page = await store.auditEntries({ afterSeq: after, limit: 1_000 });
    if (page.length === 0) break;
    for (const e of page)
      if (e.kind === 'outbox.releasing') claims.set(e.notification_id!, [...(claims.get(e.notification_id!) ?? []), e.at]);
    after = page.at(-1)!.seq;
  }
  return [...claims.values()].filter((at) => at.length > 1).map((at) => at[1]! - at[0]! - leaseMs);
}

async function run(engine: string, storeEnv: Record<string, string>, open: () => Promise<Store>): Promise<void> {
  const config = {
    ...storeEnv,
    NOTIFY_PUBLIC_URL: 'http://127.0.0.1:9',
    TWILIO_ACCOUNT_SID: SID,
    TWILIO_AUTH_TOKEN: 'e2e-token',
    TWILIO_FROM: '+14155550111',
    TWILIO_API_URL: twilio.origin,
    NOTIFY_SMS_ALLOW: '+1415',
    NOTIFY_ESCALATIONS: POLICY,
  };
  const env = cliEnv({
    ...config,
    // A short budget makes the lease of a killed worker's releases short (2 x budget + 1 s).
    NOTIFY_SEND_BUDGET_MS: '3000',
    NOTIFY_SCHEDULE_POLL_S: '1',
    NOTIFY_LOG_LEVEL: 'warn',
  });
  const store = await open();
  try {
    // The first sends (Slack, a dry run here) and their steps, as a server would keep them.
    const d = await pipelineDeps({ store, providers: {}, env: config });
    const a = workers.start(env);
    const b = workers.start(env);
    const roots: string[] = [];
    for (let i = 0; i < N; i++) {
      const call = { via: 'slack', channel: 'C0123ABCD', text: `page ${i}`, escalate: 'page' };
      roots.push(((await sendEscalating(d, 'slack', call, { client: 'bot' })) as SendResult).id);
    }
    const steps = (await Promise.all(roots.map((r) => store.escalationSteps(r)))).flat();
    expect(steps).toHaveLength(2 * N);
    const due = Math.max(...steps.map((s) => s.due_at));
    const before = bodies.length;
    // In the due second: a third answered (racing the claims), and worker A killed with requests in flight.
    await workers.until('the due second', () => Date.now() >= due - 200, 20_000);
    const answering = Promise.all(
      roots.filter((_, i) => i % 3 === 0).map((id) => answerQuestion({ store, now: Date.now }, { id }, 'Acknowledge', 'link')),
    );
    await workers.until('the first SMS', () => bodies.length > before, 20_000);
    a.kill('SIGKILL');
    const answers = await answering;
    expect(answers.map((r) => r.kind).filter((k) => k !== 'recorded')).toEqual([]);
    const left = async () => (await store.listOutbox(['scheduled', 'held', 'releasing'], 10)).length;
    await workers.until('every step to leave the outbox', async () => (await left()) === 0, 60_000);
    b.kill('SIGTERM');
    await new Promise((r) => (b.exitCode !== null ? r(null) : b.once('exit', r)));

    const received = new Map<string, number>();
    for (const m of bodies.slice(before)) {
      const root = /Escalates (ntf_[0-9a-f]+)/.exec(m.body)?.[1];
      if (root) received.set(`${root} ${m.to}`, (received.get(`${root} ${m.to}`) ?? 0) + 1);
    }
    const states = new Map<string, number>();
    for (const root of roots) {
      for (const s of await store.escalationSteps(root)) {
        states.set(s.state, (states.get(s.state) ?? 0) + 1);
        const got = received.get(`${root} ${s.call.to as string}`) ?? 0;
        if (s.state === 'released') expect(got, s.id).toBe(1);
        else if (s.state === 'cancelled') expect(got, s.id).toBe(0);
        else if (s.state === 'unknown') expect(got, s.id).toBeLessThanOrEqual(1);
        else throw new Error(`step ${s.id} ended ${s.state}`);
      }
    }
    // Sent at most once, each.
    expect([...received.values()].filter((n) => n > 1)).toEqual([]);
    const late = await takeoverLateness(store, LEASE_MS);
    expect(late.filter((ms) => ms > 2_000)).toEqual([]);
    process.stderr.write(
      `escalation-replicas ${engine}: ${JSON.stringify(Object.fromEntries(states))}, SMS ${bodies.length - before}, ` +
        `${late.length} taken over, at most ${Math.max(0, ...late)} ms past the lease\n`,
    );
  } finally {
    await store.close();
  }
}

describe('escalation steps due at once, two workers, one SIGKILLed at the due second, answers racing', () => {
  it('on one SQLite file', { timeout: 120_000 }, async () => {
    const dir = tempDataDir('notify-escalation-replicas-');
    try {
      await run('sqlite', { NOTIFY_DATA_DIR: dir }, () => openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(pgSkip !== null)('on PostgreSQL', { timeout: 120_000 }, async () => {
    const shared = await sharedPostgresSchema('escalation_replicas');
    try {
      await run('postgres', shared.env, () => openPostgresStore({ connectionString: PG_URL, schema: shared.schema, log: silentLogger }));
    } finally {
      await shared.close();
    }
  });
});
