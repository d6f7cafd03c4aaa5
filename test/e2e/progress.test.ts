/**
 * Progress and the send budget, end to end: the built CLI over stdio with Slack live against
 * a scripted fake. A client that asks for progress (the SDK's `onprogress`, which sets a
 * progressToken), of either protocol era, hears about the wait on a 429 before the send
 * completes; a peer that never answers ends the call within the budget, not at the client's
 * request timeout.
 */
import { rmSync } from 'node:fs';
import type { Progress } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { startFakePeer, type FakePeer } from '../helpers/fakes.js';
import { assertBuilt, connectCli, ERAS, errorOf, readOutbox, type CliSession, type Era, type ToolOutcome } from '../helpers/mcp-cli.js';

const BUDGET_MS = 1_500;
const OK = { status: 200, json: { ok: true, channel: 'C0123ABCD', ts: '1712345678.000300' } };
const call = { name: 'send_notification', arguments: { via: 'slack', channel: 'C0123ABCD', text: 'deploy finished' } };

let slack: FakePeer;
const patient = {} as Record<Era, CliSession>;
let hurried: CliSession;
let patientEnv: Record<string, string>;
let hurriedEnv: Record<string, string>;
const dataDirs: string[] = [];

function env(extra: Record<string, string>): Record<string, string> {
  const dir = tempDataDir('notify-e2e-progress-');
  dataDirs.push(dir);
  return cliEnv({
    NOTIFY_DATA_DIR: dir,
    SLACK_BOT_TOKEN: 'xoxb-progress-test',
    SLACK_API_URL: slack.origin,
    NOTIFY_SLACK_ALLOW: 'C0123ABCD',
    ...extra,
  });
}

const progressLines = (s: CliSession) => s.transport.stdoutLines.filter((l) => l.includes('"notifications/progress"')).length;

beforeAll(async () => {
  assertBuilt();
  slack = await startFakePeer(OK);
  patientEnv = env({});
  hurriedEnv = env({ NOTIFY_SEND_BUDGET_MS: String(BUDGET_MS) });
  [patient.legacy, patient.modern, hurried] = await Promise.all([
    connectCli(patientEnv, 'e2e-progress', 'legacy'),
    connectCli(patientEnv, 'e2e-progress', 'modern'),
    connectCli(hurriedEnv, 'e2e-budget'),
  ]);
});

afterAll(async () => {
  await Promise.allSettled([patient.legacy?.close(), patient.modern?.close(), hurried?.close()]);
  await slack?.close();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

describe.each(ERAS)('progress while a send waits on a retry (%s client)', (era) => {
  it('sends progress notifications during the Retry-After wait, then the result', async () => {
    const before = slack.requests.length;
    slack.replies.push({ status: 429, headers: { 'retry-after': '1' }, json: { ok: false, error: 'ratelimited' } }, OK);
    const heard: (Progress & { requestsMade: number })[] = [];
    const started = Date.now();
    const result = (await patient[era].client.callTool(call, {
      onprogress: (p: Progress) => heard.push({ ...p, requestsMade: slack.requests.length - before }),
    })) as ToolOutcome;
    const elapsed = Date.now() - started;

    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      via: 'slack',
      status: 'sent',
      provider: 'slack',
      provider_message_id: '1712345678.000300',
    });
    expect(slack.requests.length).toBe(before + 2);
    // Retry-After: 1 was honoured
    expect(elapsed).toBeGreaterThanOrEqual(950);

    expect(heard.length).toBeGreaterThanOrEqual(1);
    expect(heard[0]!.progress).toBeGreaterThan(0);
    expect(heard[0]!.message).toMatch(/rate_limited.*retrying in \d+ ms/);
    // heard while waiting, not bundled with the result: before the retry reached Slack
    expect(heard[0]!.requestsMade).toBe(1);
    for (let i = 1; i < heard.length; i++) expect(heard[i]!.progress).toBeGreaterThan(heard[i - 1]!.progress);

    const record = (await readOutbox(patientEnv)).find((r) => r.id === (result.structuredContent as { id: string }).id);
    expect(record).toMatchObject({
      status: 'sent',
      attempts: 2,
      error_code: null,
      attempt_log: [
        { attempt: 1, outcome: 'rate_limited', latency_ms: expect.any(Number) },
        { attempt: 2, outcome: 'sent', latency_ms: expect.any(Number) },
      ],
    });
  });

  it('sends none to a client that did not ask, and still retries', async () => {
    const before = slack.requests.length;
    const progressBefore = progressLines(patient[era]);
    slack.replies.push({ status: 429, headers: { 'retry-after': '1' }, json: { ok: false, error: 'ratelimited' } }, OK);
    const result = (await patient[era].client.callTool(call)) as ToolOutcome;
    expect(result.structuredContent).toMatchObject({ status: 'sent' });
    expect(slack.requests.length).toBe(before + 2);
    expect(progressLines(patient[era])).toBe(progressBefore);
  });
});

describe(`the send budget (NOTIFY_SEND_BUDGET_MS=${BUDGET_MS})`, () => {
  it('ends a send to a peer that never answers within the budget, not retried', async () => {
    const before = slack.requests.length;
    slack.replies.push('hang');
    const started = Date.now();
    const result = (await hurried.client.callTool(call)) as ToolOutcome;
    const elapsed = Date.now() - started;

    const error = errorOf(result);
    expect(['DELIVERY_UNKNOWN', 'PROVIDER_UNAVAILABLE']).toContain(error.code);
    expect(error.via).toBe('slack');
    expect(elapsed).toBeGreaterThanOrEqual(BUDGET_MS - 100);
    // the request may have reached Slack: a second one could post twice
    expect(slack.requests.length).toBe(before + 1);

    // A lost outcome is recorded `unknown` (the provider may have it); a transient failure `failed`.
    const record = (await readOutbox(hurriedEnv)).find((r) => r.error_code === error.code);
    expect(record).toMatchObject({ via: 'slack', attempts: 1, status: error.code === 'DELIVERY_UNKNOWN' ? 'unknown' : 'failed' });
    // Its own bound sits under the default budget: the configured one ended it.
  }, 15_000);

  it('gives up on a peer that keeps failing with PROVIDER_UNAVAILABLE and retry_after_s, within the budget', async () => {
    const before = slack.requests.length;
    for (let i = 0; i < 30; i++) slack.replies.push({ status: 503, json: { ok: false, error: 'service_unavailable' } });
    const result = (await hurried.client.callTool(call)) as ToolOutcome;
    slack.replies.length = 0;

    const error = errorOf(result) as { code: string; retry_after_s?: number; message: string };
    expect(error.code).toBe('PROVIDER_UNAVAILABLE');
    // The configured budget (what was left of it when the provider was first called), not the default one, is what it gave up within.
    const budget = Number(/within the (\d+) ms budget/.exec(error.message)?.[1]);
    expect(budget).toBeGreaterThan(0);
    expect(budget).toBeLessThanOrEqual(BUDGET_MS);
    expect(error.retry_after_s).toBeGreaterThanOrEqual(1);
    expect(slack.requests.length - before).toBeGreaterThanOrEqual(2);
  });
});
