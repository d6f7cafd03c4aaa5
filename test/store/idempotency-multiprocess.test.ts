/**
 * Idempotency across real server processes that share one store, once on a SQLite file and
 * once on PostgreSQL (a fresh schema; required when DATABASE_URL is set, else skipped with a
 * message when it does not answer):
 * - 50 concurrent duplicate sends over 4 processes make exactly one provider call, and all
 *   50 callers get the same id. The provider is the real Slack adapter pointed at a counting
 *   fake that answers slowly, so the duplicates arrive while the first send is in flight.
 * - A process killed while its provider call is in flight: once its budget has passed,
 *   another process takes the claim over and answers DELIVERY_UNKNOWN without calling the
 *   provider, and so does every later duplicate. The answer names the notification id the
 *   dead owner was sending under (the claim row carries it), and an `unknown` record under
 *   that id is there for status and receipts to settle.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildStdioTransport, cliEnv, tempDataDir } from '../helpers/cli.js';
import { PG_URL, postgresSkipReason } from '../helpers/postgres.js';

const pgSkip = await postgresSkipReason('idempotency-multiprocess');

let slack: Server;
let slackOrigin: string;
let posts = 0;

beforeAll(async () => {
  slack = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.includes('chat.postMessage')) posts += 1;
      // Slow enough that every duplicate arrives while the first send is in flight.
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, channel: 'C0123ABCD', ts: `1712345678.${String(posts).padStart(6, '0')}` }));
      }, 400);
    });
  });
  await new Promise<void>((r) => slack.listen(0, '127.0.0.1', r));
  slackOrigin = `http://127.0.0.1:${(slack.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => slack.close(r));
});

async function burst(storeEnv: Record<string, string>) {
  posts = 0;
  const env = cliEnv({
    ...storeEnv,
    SLACK_BOT_TOKEN: 'xoxb-test-token',
    SLACK_API_URL: slackOrigin,
    NOTIFY_SLACK_ALLOW: '*',
    NOTIFY_LOG_LEVEL: 'warn',
  });
  const transports = Array.from({ length: 4 }, () => new ChildStdioTransport([], env));
  const clients = transports.map(() => new Client({ name: 'ops-bot', version: '1.0.0' }));
  try {
    await Promise.all(clients.map((c, i) => c.connect(transports[i]!)));
    const key = `deploy-${randomBytes(4).toString('hex')}`;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        clients[i % 4]!.callTool({
          name: 'send_notification',
          arguments: { via: 'slack', channel: 'C0123ABCD', text: 'Deploy finished', idempotency_key: key },
        }),
      ),
    );
    return { results, stderr: transports.map((t) => t.stderr).join('') };
  } finally {
    await Promise.all(transports.map((t) => t.close()));
  }
}

function expectExactlyOnce({ results, stderr }: Awaited<ReturnType<typeof burst>>) {
  for (const r of results) expect(r.isError, `${JSON.stringify(r.structuredContent)}\n${stderr}`).toBeFalsy();
  const contents = results.map((r) => r.structuredContent as { id: string; status: string; replayed?: boolean });
  expect(posts).toBe(1);
  expect(new Set(contents.map((c) => c.id)).size).toBe(1);
  expect(contents.every((c) => c.status === 'sent')).toBe(true);
  expect(contents.filter((c) => !c.replayed)).toHaveLength(1);
}

/** A store for server processes to share: a SQLite directory, or a fresh PostgreSQL schema. */
type SharedStore = {
  env: Record<string, string>;
  deliveries(): Promise<number>;
  /** The delivery rows' id and status. */
  records(): Promise<{ id: string; status: string }[]>;
  close(): Promise<void>;
};

async function sqliteStore(): Promise<SharedStore> {
  const dir = tempDataDir();
  return {
    env: { NOTIFY_DATA_DIR: dir },
    async deliveries() {
      const db = new Database(join(dir, 'notify.db'), { readonly: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM deliveries').get() as { n: number }).n;
      } finally {
        db.close();
      }
    },
    async records() {
      const db = new Database(join(dir, 'notify.db'), { readonly: true });
      try {
        return db.prepare('SELECT id, status FROM deliveries ORDER BY seq').all() as { id: string; status: string }[];
      } finally {
        db.close();
      }
    },
    close: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function postgresStore(): Promise<SharedStore> {
  const schema = `notify_mp_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    env: { NOTIFY_DATA_DIR: tempDataDir(), DATABASE_URL: url.toString() },
    async deliveries() {
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${schema}.deliveries`);
      return rows[0].n as number;
    },
    async records() {
      const { rows } = await admin.query(`SELECT id, status FROM ${schema}.deliveries ORDER BY seq`);
      return rows as { id: string; status: string }[];
    },
    async close() {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

const STORES = [
  { name: 'sharing one SQLite file', open: sqliteStore, skip: null },
  { name: 'sharing PostgreSQL', open: postgresStore, skip: pgSkip },
] as const;

describe('50 duplicates over 4 processes', () => {
  for (const { name, open, skip } of STORES) {
    it.skipIf(skip !== null)(`${name}: one provider call, one id${skip ? ` [skipped: ${skip}]` : ''}`, async () => {
      const shared = await open();
      try {
        expectExactlyOnce(await burst(shared.env));
        expect(await shared.deliveries()).toBe(1);
      } finally {
        await shared.close();
      }
    });
  }
});

/**
 * A Slack that takes every message and never answers: the sender's provider call is in
 * flight for as long as the test likes.
 */
async function hangingSlack() {
  const state = { posts: 0, arrived: undefined as (() => void) | undefined };
  const firstPost = new Promise<void>((r) => (state.arrived = r));
  const server = createServer((req) => {
    req.resume();
    if (req.url?.includes('chat.postMessage')) {
      state.posts += 1;
      state.arrived?.();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    state,
    firstPost,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('a process killed while its provider call is in flight', () => {
  const BUDGET_MS = 1500;

  for (const { name, open, skip } of STORES) {
    it.skipIf(skip !== null)(
      `${name}: the takeover answers DELIVERY_UNKNOWN under the dead owner's notification id, records it unknown, and never calls the provider${skip ? ` [skipped: ${skip}]` : ''}`,
      async () => {
        const shared = await open();
        const fake = await hangingSlack();
        const env = cliEnv({
          ...shared.env,
          SLACK_BOT_TOKEN: 'xoxb-test-token',
          SLACK_API_URL: fake.origin,
          NOTIFY_SLACK_ALLOW: '*',
          NOTIFY_SEND_BUDGET_MS: String(BUDGET_MS),
          NOTIFY_LOG_LEVEL: 'warn',
        });
        const call = {
          name: 'send_notification',
          arguments: {
            via: 'slack',
            channel: 'C0123ABCD',
            text: 'Deploy finished',
            idempotency_key: `crash-${randomBytes(4).toString('hex')}`,
          },
        };
        const dying = new ChildStdioTransport([], env);
        const survivor = new ChildStdioTransport([], env);
        try {
          const first = new Client({ name: 'ops-bot', version: '1.0.0' });
          await first.connect(dying);
          void first.callTool(call).catch(() => {});
          await fake.firstPost;
          const killedAt = Date.now();
          const exited = new Promise((r) => dying.child.once('exit', r));
          dying.child.kill('SIGKILL');
          await exited;

          const second = new Client({ name: 'ops-bot', version: '1.0.0' });
          await second.connect(survivor);
          // The dead owner's claim counts as abandoned once its budget has passed.
          await sleep(Math.max(0, killedAt + BUDGET_MS + 100 - Date.now()));
          const named = new Set<string | undefined>();
          for (let i = 0; i < 2; i++) {
            const r = await second.callTool(call);
            expect(fake.state.posts, 'provider calls').toBe(1);
            const error = (r.structuredContent as { error?: { code: string; message: string; notification_id?: string } }).error;
            expect(r.isError, JSON.stringify(r.structuredContent)).toBe(true);
            expect(error?.code).toBe('DELIVERY_UNKNOWN');
            expect(error?.message).toMatch(/this call sent nothing/i);
            // The id the dead owner was sending under, so status and receipts can settle it.
            expect(error?.notification_id, JSON.stringify(error)).toMatch(/^ntf_/);
            named.add(error?.notification_id);
          }
          expect(named.size).toBe(1);
          // The dead owner never learnt the outcome; the taker recorded it as unknown, under that id.
          expect(await shared.records()).toEqual([{ id: [...named][0], status: 'unknown' }]);
        } finally {
          if (dying.child.exitCode === null && dying.child.signalCode === null) dying.child.kill('SIGKILL');
          await survivor.close();
          await fake.close();
          await shared.close();
        }
      },
    );
  }
});
