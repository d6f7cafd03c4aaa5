/**
 * get_notification on a send that asked: its question and answer, within the output schema,
 * and wait_s: back as soon as the answer lands (written by another store on the same data,
 * as another process would), or when the time is up; past the bound on open waits, at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { delivery } from '../../../test/store/suite.js';
import { loadConfig } from '../../config/config.js';
import { NotifyError } from '../../core/errors.js';
import { silentLogger } from '../../core/log.js';
import { answerWaits, type AnswerWaits } from '../../notification/answer-waits.js';
import { openSqliteStore, type SqliteStore } from '../../store/sqlite/store.js';
import type { ToolContext } from '../tool-kit.js';
import { getNotificationTool } from './get-notification.js';

const T0 = Date.UTC(2026, 5, 1, 12);
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
let dir: string;
let store: SqliteStore;
let other: SqliteStore;
let waits: AnswerWaits;
let ctx: ToolContext;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'notify-get-answer-'));
  store = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
  other = await openSqliteStore({ file: join(dir, 'notify.db'), log: silentLogger });
  waits = answerWaits(store);
  const config = loadConfig({ NOTIFY_DATA_DIR: dir });
  ctx = {
    store,
    config,
    log: silentLogger,
    client: 'bot',
    now: () => T0,
    signal: new AbortController().signal,
    deps: { config, store, channels: [], log: silentLogger, now: () => T0 },
    answerWaits: waits,
  };
  await store.writeRecord(delivery('ntf_q', T0, { client: 'bot', attempt_log: [] }));
  await store.recordQuestion(
    { notification_id: 'ntf_q', prompt: 'Deploy?', choices: ['Yes', 'No'], expires_in_s: 3600, created_at: T0, client: 'bot' },
    [],
  );
});
afterEach(async () => {
  waits.close();
  await store.close();
  await other.close();
  rmSync(dir, { recursive: true, force: true });
});

const tool = () => getNotificationTool(ctx.config.channels);
const read = async (args: { id: string; wait_s?: number }) => (await tool().handler(args, ctx)) as Record<string, unknown>;
const answer = { choice: 'Yes', by: 'link', via: 'email', at: T0 + 1_000 };

describe('get_notification: question and answer', () => {
  it('shows the question with its expiry from when the message left, then the answer; within the output schema', async () => {
    const validate = addFormats(new Ajv({ allErrors: true })).compile(tool().outputSchema!);
    const before = await read({ id: 'ntf_q' });
    expect(before.question).toEqual({ choices: ['Yes', 'No'], expires_at: new Date(T0 + 3_600_000).toISOString() });
    expect(before.answer).toBeUndefined();
    expect(validate(before), JSON.stringify(validate.errors)).toBe(true);
    await other.answerQuestion('ntf_q', answer);
    const after = await read({ id: 'ntf_q' });
    expect(after.answer).toEqual({ ...answer, at: new Date(answer.at).toISOString() });
    expect(validate(after), JSON.stringify(validate.errors)).toBe(true);
  });

  it('wait_s returns as soon as another process takes the answer', async () => {
    const started = Date.now();
    const waiting = read({ id: 'ntf_q', wait_s: 20 });
    setTimeout(() => void other.answerQuestion('ntf_q', answer), 300);
    const out = await waiting;
    expect(out).toMatchObject({ wait: 'answered', answer: { choice: 'Yes' } });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(waits.open).toBe(0);
  });

  it('wait_s returns when the time is up; an answered question or a send that did not ask returns at once', async () => {
    const started = Date.now();
    expect(await read({ id: 'ntf_q', wait_s: 1 })).toMatchObject({ wait: 'timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    await store.writeRecord(delivery('ntf_plain', T0, { client: 'bot' }));
    const plain = await read({ id: 'ntf_plain', wait_s: 50 });
    expect(plain.wait).toBeUndefined();
    await store.answerQuestion('ntf_q', answer);
    const t = Date.now();
    expect((await read({ id: 'ntf_q', wait_s: 50 })).wait).toBeUndefined();
    expect(Date.now() - t).toBeLessThan(500);
  });

  it('past the bound on open waits answers at once with the state now, and says so', async () => {
    waits.close();
    waits = answerWaits(store, { max: 1 });
    ctx.answerWaits = waits;
    const first = read({ id: 'ntf_q', wait_s: 5 });
    const t = Date.now();
    expect(await read({ id: 'ntf_q', wait_s: 5 })).toMatchObject({ wait: 'busy', question: { choices: ['Yes', 'No'] } });
    expect(Date.now() - t).toBeLessThan(500);
    await other.answerQuestion('ntf_q', answer);
    expect(await first).toMatchObject({ wait: 'answered' });
  });

  it("bounds wait_s to 0..55 whole seconds; another client's id is refused at once, never waited on", async () => {
    for (const wait_s of [56, -1, 1.5, '5']) expect(tool().input.safeParse({ id: 'ntf_q', wait_s }).success).toBe(false);
    expect(tool().input.safeParse({ id: 'ntf_q', wait_s: 55 }).success).toBe(true);
    ctx.client = 'someone-else';
    const t = Date.now();
    await expect(read({ id: 'ntf_q', wait_s: 30 })).rejects.toBeInstanceOf(NotifyError);
    expect(Date.now() - t).toBeLessThan(500);
  });
});
