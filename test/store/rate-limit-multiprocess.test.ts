/**
 * Rate limits hold across server processes that share one store (the built CLI; `npm run
 * build` first): two processes over one SQLite file, and two over one PostgreSQL schema
 * (required when DATABASE_URL is set, else skipped with a message when it does not answer).
 * One client name calls both processes at once; together they admit exactly the limit.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ChildStdioTransport, cliEnv, tempDataDir } from '../helpers/cli.js';
import { PG_URL, postgresSkipReason } from '../helpers/postgres.js';

const pgSkip = await postgresSkipReason('rate-limit-multiprocess');

const LIMIT = 5;
const CALLS_PER_PROCESS = 8;

type Shared = { env: Record<string, string>; close(): Promise<void> };

async function sqliteShared(): Promise<Shared> {
  const dir = tempDataDir('notify-rate-');
  return { env: { NOTIFY_DATA_DIR: dir }, close: async () => rmSync(dir, { recursive: true, force: true }) };
}

async function postgresShared(): Promise<Shared> {
  const schema = `notify_rate_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    env: { NOTIFY_DATA_DIR: tempDataDir('notify-rate-'), DATABASE_URL: url.toString() },
    async close() {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

const STORES = [
  { name: 'two processes sharing one SQLite file', open: sqliteShared, skip: null },
  { name: 'two processes sharing PostgreSQL', open: postgresShared, skip: pgSkip },
] as const;

/** Bounds of each step, so a stall fails naming its step (and the children's stderr) instead of the test's timeout. */
const CONNECT_MS = 15_000;
const CALL_MS = 10_000;
const EXIT_MS = 10_000;

describe('NOTIFY_RATE_LIMITS across processes', () => {
  for (const { name, open, skip } of STORES) {
    it.skipIf(skip !== null)(
      `${name}: the limit holds for the pair, not per process${skip ? ` [skipped: ${skip}]` : ''}`,
      async () => {
        const shared = await open();
        const env = cliEnv({ ...shared.env, NOTIFY_RATE_LIMITS: `sms=${LIMIT}/h`, NOTIFY_SMS_ALLOW: '*', NOTIFY_LOG_LEVEL: 'warn' });
        const transports: ChildStdioTransport[] = [];
        const stderr = () => transports.map((t, i) => `--- process ${i} stderr:\n${t.stderr}`).join('\n');
        try {
          const clients: Client[] = [];
          // One after the other (a child starts when it is spawned): two processes starting and
          // migrating one new database at once is not what this tests, and doubles the start-up load.
          for (let i = 0; i < 2; i++) {
            const transport = new ChildStdioTransport([], env);
            transports.push(transport);
            const client = new Client({ name: 'ops-bot', version: '1.0.0' });
            await client.connect(transport, { timeout: CONNECT_MS }).catch((err: Error) => {
              throw new Error(`process ${i} did not answer initialize within ${CONNECT_MS} ms: ${err.message}\n${stderr()}`);
            });
            clients.push(client);
          }
          const results = await Promise.all(
            Array.from({ length: 2 * CALLS_PER_PROCESS }, (_, i) =>
              clients[i % 2]!.callTool(
                { name: 'send_notification', arguments: { via: 'sms', to: '+14155550123', body: `disk ${i}` } },
                { timeout: CALL_MS },
              ).catch((err: Error) => {
                throw new Error(`call ${i} (process ${i % 2}) got no answer within ${CALL_MS} ms: ${err.message}\n${stderr()}`);
              }),
            ),
          );
          const admitted = results.filter((r) => !r.isError);
          const refused = results.filter((r) => r.isError);
          expect(admitted, stderr()).toHaveLength(LIMIT);
          for (const r of refused) {
            expect((r.structuredContent as { error: { code: string } }).error).toMatchObject({ code: 'RATE_LIMITED', via: 'sms' });
          }
          // Each child exits on its own once its stdin ends (it is killed past EXIT_MS, and that fails here).
          await Promise.all(transports.map((t) => t.close(EXIT_MS)));
          expect(
            transports.map((t) => t.killedAtClose),
            `a process did not exit within ${EXIT_MS} ms of its stdin ending\n${stderr()}`,
          ).toEqual([false, false]);
          expect(
            transports.map((t) => t.child.exitCode),
            stderr(),
          ).toEqual([0, 0]);
        } finally {
          await Promise.all(transports.map((t) => t.close(EXIT_MS)));
          await shared.close();
        }
      },
      60_000,
    );
  }
});
