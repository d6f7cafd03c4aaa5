/**
 * 50 concurrent duplicate sends under one idempotency key, spread over 4 server processes
 * that share one store, make exactly one provider call, and all 50 callers get the same id.
 * The provider is the real Slack adapter pointed at a counting fake that answers slowly, so
 * the duplicates arrive while the first send is in flight. Once on a shared SQLite file,
 * once on PostgreSQL (a fresh schema; skipped with a message when it does not answer).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildStdioTransport, cliEnv, tempDataDir } from './helpers/cli.js';

const PG_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

async function pgAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

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

describe('50 duplicates over 4 processes', () => {
  it('sharing one SQLite file: one provider call, one id', async () => {
    expectExactlyOnce(await burst({ NOTIFY_DATA_DIR: tempDataDir() }));
  });

  it('sharing PostgreSQL: one provider call, one id', async (ctx) => {
    if (!(await pgAnswers())) {
      process.stderr.write(`idempotency-multiprocess: PostgreSQL SKIPPED, ${PG_URL} does not answer\n`);
      ctx.skip();
    }
    const schema = `notify_mp_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    try {
      const url = new URL(PG_URL);
      url.searchParams.set('options', `-c search_path=${schema}`);
      expectExactlyOnce(await burst({ NOTIFY_DATA_DIR: tempDataDir(), DATABASE_URL: url.toString() }));
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${schema}.deliveries`);
      expect(rows[0].n).toBe(1);
    } finally {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});
