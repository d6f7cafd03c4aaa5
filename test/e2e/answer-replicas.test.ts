/**
 * A waiting get_notification returns the answer another replica took (issue 37): two
 * `notify-mcp --http` processes over one store (one SQLite file; one PostgreSQL schema), a
 * question asked on the first, a get_notification with wait_s waiting there, and the answer
 * page's POST made to the second. Both protocol eras for the waiting call.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { connectHttp, type ToolOutcome, ERAS } from '../helpers/mcp-cli.js';
import { postgresSkipReason, sharedPostgresSchema } from '../helpers/postgres.js';

const OPS = 'ops-token-0123456789abcdef';
const pgSkip = await postgresSkipReason('answer-replicas');
const open: { stop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const o of open.splice(0).reverse()) await o.stop();
});

async function replicas(store: Record<string, string>): Promise<[HttpCli, HttpCli]> {
  const env = (dir: string) =>
    cliEnv({
      ...store,
      NOTIFY_DATA_DIR: dir,
      NOTIFY_HTTP_TOKENS: `ops:${OPS}`,
      NOTIFY_OPERATOR_CLIENTS: 'ops',
      NOTIFY_PUBLIC_URL: 'https://notify.example.com',
    });
  // SQLite: one data dir for both; PostgreSQL: each its own dir, one schema.
  const shared = tempDataDir('notify-answer-replicas-');
  const a = await startHttpCli(env(shared));
  open.push(a);
  const b = await startHttpCli(env(store.DATABASE_URL ? tempDataDir('notify-answer-replicas-') : shared));
  open.push(b);
  return [a, b];
}

async function client(server: HttpCli, era: (typeof ERAS)[number]): Promise<Client> {
  const c = await connectHttp(server.url, 'oncall-bot', era, OPS);
  open.push({ stop: () => c.close() });
  return c;
}

/** The answer link's token, as the dry run recorded it in the message. */
async function tokenOf(server: HttpCli, id: string): Promise<string> {
  const res = await fetch(`${server.origin}/console/notifications/${id}/payload.json`, { headers: { Authorization: `Bearer ${OPS}` } });
  const token = /\/answer\/([A-Za-z0-9_-]{43})/.exec(await res.text())?.[1];
  expect(token, `no answer link in ${id}`).toBeDefined();
  return token!;
}

async function waitOnOneAnswerOnOther([a, b]: [HttpCli, HttpCli]): Promise<void> {
  for (const era of ERAS) {
    const agent = await client(a, era);
    const sent = (await agent.callTool({
      name: 'send_notification',
      arguments: { via: 'slack', channel: '#ops', text: `Disk full on db-1 (${era}). Expand it?`, ask: { choices: ['Expand', 'Wait'] } },
    })) as ToolOutcome;
    const id = sent.structuredContent!.id as string;
    const token = await tokenOf(a, id);
    const started = Date.now();
    const waiting = agent.callTool({ name: 'get_notification', arguments: { id, wait_s: 30 } }) as Promise<ToolOutcome>;
    await new Promise((r) => setTimeout(r, 300));
    // The person's browser posts the form to whichever replica the load balancer picks: the other one.
    const posted = await fetch(`${b.origin}/answer/${token}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'choice=Expand',
    });
    expect(posted.status, era).toBe(200);
    const got = await waiting;
    expect(got.structuredContent, era).toMatchObject({ id, answer: { choice: 'Expand', by: 'link', via: 'slack' }, wait: 'answered' });
    // It returned on the answer, not at the end of wait_s.
    expect(Date.now() - started, era).toBeLessThan(20_000);
  }
}

describe('an answer taken by one replica ends a wait on another', () => {
  it('on one SQLite file', { timeout: 90_000 }, async () => {
    await waitOnOneAnswerOnOther(await replicas({}));
  });

  it.skipIf(pgSkip !== null)('on PostgreSQL', { timeout: 90_000 }, async () => {
    const shared = await sharedPostgresSchema('answer_replicas');
    open.push({ stop: () => shared.close() });
    await waitOnOneAnswerOnOther(await replicas(shared.env));
  });
});
