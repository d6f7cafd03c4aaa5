/**
 * An approved send outlives the process that approved it, over the built CLI on PostgreSQL
 * with a real SMTP peer. A `--http` server in console mode holds an agent's email; an
 * operator approves it in the console; the server's own release of it is stopped just before
 * its provider call (the test holds a lock on the idempotency table, so the release's claim
 * waits) and the server is SIGKILLed there. A `notify-mcp worker` started on the same store
 * takes the dead release over once its lease runs out and sends the mail: the peer receives
 * it exactly once, and the record ends `sent` with the operator's approval on it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mutedClient } from '../helpers/approval.js';
import { CLI, cliEnv, tempDataDir } from '../helpers/cli.js';
import { raw } from '../helpers/http.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import type { ToolOutcome } from '../helpers/mcp-cli.js';
import { PG_URL, postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const pgSkip = await postgresSkipReason('approval-outbox');
const OPS = 'ops-token-0123456789abcdef';
const BOT = 'bot-token-0123456789abcdef';

let smtp: TestSmtpServer;
let shared: Awaited<ReturnType<typeof sharedPostgresSchema>> | undefined;
let server: HttpCli | undefined;
let worker: ChildProcess | undefined;
let workerLog = '';
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  if (worker && worker.exitCode === null) worker.kill('SIGKILL');
  if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  await shared?.close();
  await smtp?.close();
});

async function until(what: string, ok: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; !(await ok()); i++) {
    if (i > 600)
      throw new Error(
        `timed out waiting for ${what}; worker said:\n${workerLog.slice(-3000)}\nserver said:\n${server?.stderr().slice(-3000)}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(pgSkip !== null)('an approval survives a SIGKILL before its provider call', () => {
  it('another process (notify-mcp worker) sends it exactly once', async () => {
    shared = await sharedPostgresSchema('approval_outbox');
    const env = cliEnv({
      ...shared.env,
      NOTIFY_DATA_DIR: tempDataDir('notify-approval-outbox-'),
      SMTP_URL: smtp.url,
      EMAIL_FROM: 'notify-mcp <alerts@notify.test>',
      NOTIFY_EMAIL_ALLOW: 'example.com',
      NOTIFY_APPROVAL: 'email',
      NOTIFY_APPROVAL_MODE: 'console',
      NOTIFY_HTTP_TOKENS: `ops:${OPS},bot:${BOT}`,
      NOTIFY_OPERATOR_CLIENTS: 'ops',
      // The lease of a killed release is 2 x budget + 1 s.
      NOTIFY_SEND_BUDGET_MS: '3000',
      NOTIFY_SCHEDULE_POLL_S: '1',
    });
    server = await startHttpCli(env);
    const client = mutedClient('outbox-bot', 'legacy');
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${BOT}` } } }),
    );
    const subject = `approved then killed ${Date.now()}`;
    const held = (await client.callTool({
      name: 'send_notification',
      arguments: { via: 'email', to: 'ops@example.com', subject, body_html: '<p>disk full</p>' },
    })) as ToolOutcome;
    await client.close();
    expect(held.structuredContent).toMatchObject({ status: 'pending_approval' });
    const id = held.structuredContent!.id as string;

    const db = new pg.Client({ connectionString: PG_URL });
    await db.connect();
    const outboxState = async () =>
      (await db.query(`SELECT state FROM ${shared!.schema}.outbox WHERE id = $1`, [id])).rows[0]?.state as string | undefined;
    const sha = (await db.query(`SELECT approval FROM ${shared.schema}.deliveries WHERE id = $1`, [id])).rows[0].approval
      .payload_sha256 as string;
    const lock = new pg.Client({ connectionString: PG_URL });
    await lock.connect();
    await lock.query('BEGIN');
    await lock.query(`LOCK TABLE ${shared.schema}.idempotency_keys IN ACCESS EXCLUSIVE MODE`);

    const decision = raw(`${server.origin}/console/approvals/${id}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${OPS}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ decision: 'approve', payload_sha256: sha }).toString(),
    }).catch(() => undefined);
    // Approved and claimed for release; its idempotency claim waits on the lock, before any provider call.
    await until('the approved send to be claimed for release', async () => (await outboxState()) === 'releasing');
    expect((await db.query(`SELECT status FROM ${shared.schema}.deliveries WHERE id = $1`, [id])).rows[0].status).toBe('approved');
    const killed = new Promise((r) => server!.child.once('exit', r));
    server.child.kill('SIGKILL');
    await killed;
    await decision;
    await lock.query('ROLLBACK');
    await lock.end();
    expect(smtp.received.filter((m) => m.raw.includes(subject))).toHaveLength(0);

    worker = spawn(process.execPath, [CLI, 'worker'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    worker.stderr!.setEncoding('utf8').on('data', (c: string) => (workerLog += c));
    await until('the worker to release it', async () => (await outboxState()) === 'released');
    const row = (await db.query(`SELECT status, approval FROM ${shared.schema}.deliveries WHERE id = $1`, [id])).rows[0];
    await db.end();
    expect(row.status).toBe('sent');
    expect(row.approval).toMatchObject({ outcome: 'approved', decided_by: 'ops' });
    expect(smtp.received.filter((m) => m.raw.includes(subject))).toHaveLength(1);
  });
});
