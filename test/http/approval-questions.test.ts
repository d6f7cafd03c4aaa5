/**
 * Open approval questions are bounded (2025-11-25 sessions, where the SDK holds the call open
 * while the person thinks): at most OPEN_QUESTIONS_PER_SESSION per session and
 * OPEN_QUESTIONS_PER_CLIENT per token client across its sessions; past either, the call is
 * answered at once with RATE_LIMITED and retry_after_s, nothing sent. An answer, a closed
 * session, frees its places. In process over HTTP with tokens.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/core/log.js';
import { OPEN_QUESTIONS_PER_CLIENT, OPEN_QUESTIONS_PER_SESSION } from '../../src/mcp/approval-round.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { askingClient, type Answer, type AskingClient } from '../helpers/approval.js';
import { errorOf, type ToolOutcome } from '../helpers/mcp-cli.js';

const BOT = 'bot-token-0123456789abcdef';
const BOT2 = 'bot2-token-0123456789abcde';
const SMS = { via: 'sms', to: '+14155550123', body: 'Door code 4411' };

/** A person who answers each question only when the test says. */
interface Person extends AskingClient {
  waiting: ((a: Answer) => void)[];
  transport: StreamableHTTPClientTransport;
}

describe('open approval questions are bounded', () => {
  let app: App;
  let http: HttpHandle;
  const people: Person[] = [];
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-questions-'));
    app = await createApp(
      loadConfig({ NOTIFY_DATA_DIR: dir, HOME: dir, NOTIFY_HTTP_TOKENS: `bot:${BOT},bot2:${BOT2}`, NOTIFY_APPROVAL: 'all' }),
      createLogger('error', () => {}),
    );
    http = await serveHttp(app, { port: 0 });
  });
  afterAll(async () => {
    for (const p of people) for (const w of p.waiting.splice(0)) w('decline');
    await Promise.all(people.map((p) => p.client.close().catch(() => {})));
    await http?.close();
    await app?.close();
  });

  async function person(token: string): Promise<Person> {
    const asking = askingClient('agent', 'legacy') as Person;
    asking.waiting = [];
    asking.answer = () => new Promise<Answer>((r) => asking.waiting.push(r));
    asking.transport = new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await asking.client.connect(asking.transport);
    people.push(asking);
    return asking;
  }
  const send = (p: Person) =>
    p.client.callTool({ name: 'send_notification', arguments: SMS }, { timeout: 120_000 }) as Promise<ToolOutcome>;
  /**
   * `n` calls of `p`'s, each made once the one before it has put its question: n questions
   * open at once. (Made all at once, a legacy session sometimes put only the first question
   * within 30 s: an open finding, not what this file tests.)
   */
  async function openQuestions(p: Person, n: number): Promise<Promise<ToolOutcome>[]> {
    const calls: Promise<ToolOutcome>[] = [];
    for (let i = 1; i <= n; i++) {
      calls.push(send(p));
      await expect.poll(() => p.waiting.length, { timeout: 30_000 }).toBe(i);
    }
    return calls;
  }

  it('refuses a session its next question past its share, and asks again once one is answered', async () => {
    const p = await person(BOT);
    const calls = await openQuestions(p, OPEN_QUESTIONS_PER_SESSION);
    const refused = await send(p);
    expect(refused.isError).toBe(true);
    const error = errorOf(refused) as { code: string; message: string; retry_after_s?: number };
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.message).toContain('Nothing was sent');
    expect(error.retry_after_s).toBeGreaterThan(0);
    expect(p.questions).toHaveLength(OPEN_QUESTIONS_PER_SESSION);
    // One answered: its place is free, and the next call is asked.
    p.waiting.shift()!('decline');
    expect(errorOf(await calls[0]!).code).toBe('APPROVAL_DECLINED');
    const next = send(p);
    await expect.poll(() => p.questions.length, { timeout: 30_000 }).toBe(OPEN_QUESTIONS_PER_SESSION + 1);
    for (const w of p.waiting.splice(0)) w('decline');
    await Promise.all([...calls, next]);
  }, 90_000);

  it('refuses a token client past its share across sessions, not another client; a closed session frees its places', async () => {
    const sessions = OPEN_QUESTIONS_PER_CLIENT / OPEN_QUESTIONS_PER_SESSION;
    const held: Person[] = [];
    const calls: Promise<ToolOutcome>[] = [];
    for (let i = 0; i < sessions; i++) {
      const p = await person(BOT);
      held.push(p);
      calls.push(...(await openQuestions(p, OPEN_QUESTIONS_PER_SESSION)).map((c) => c.catch(() => ({ isError: true }) as ToolOutcome)));
    }
    const late = await person(BOT);
    const refused = errorOf(await send(late));
    expect(refused.code).toBe('RATE_LIMITED');
    expect(refused.message).toContain('client bot has 32 open');
    // Another token's share is its own.
    const other = await person(BOT2);
    const asked = send(other);
    await expect.poll(() => other.waiting.length, { timeout: 30_000 }).toBe(1);
    other.waiting.shift()!('decline');
    expect(errorOf(await asked).code).toBe('APPROVAL_DECLINED');
    // A session that ends (DELETE) takes its questions with it.
    await held[0]!.transport.terminateSession();
    await held[0]!.client.close();
    const again = send(late);
    await expect.poll(() => late.waiting.length, { timeout: 30_000 }).toBe(1);
    late.waiting.shift()!('decline');
    expect(errorOf(await again).code).toBe('APPROVAL_DECLINED');
    for (const p of held) for (const w of p.waiting.splice(0)) w('decline');
    await Promise.all(calls);
  }, 90_000);
});
