/**
 * Escalation over the built CLI (`notify-mcp --http`), in both protocol eras, against the
 * Slack and Twilio fakes: a Slack page first and an SMS after while nobody answers; an answer
 * 1 s before a step's due time cancels it; an answer 1 s after leaves the step sent and still
 * lands; a retract of the first send cancels the steps left; quiet hours hold a non-urgent
 * step; a cap stops a step with CAP_REACHED in its state. Delays of seconds, a 1 s poll.
 */
import { createServer } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, tempDataDir } from '../helpers/cli.js';
import { startFakePeer, type FakePeer } from '../helpers/fakes.js';
import { startHttpCli, type HttpCli } from '../helpers/http-cli.js';
import { connectHttp, type ToolOutcome, type Era, ERAS } from '../helpers/mcp-cli.js';

const BOT = 'ops-bot-token-0123456789abcdef';
const CAPPED = 'capped-bot-token-0123456789abcdef';
const SID = 'AC' + '1'.repeat(32);
const LINK = /(http:\/\/127\.0\.0\.1:\d+\/answer\/[A-Za-z0-9_-]{43})/;

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as { port: number };
  await new Promise((r) => probe.close(r));
  return port;
}
const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));
const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);

let slack: FakePeer;
let twilio: FakePeer;
const servers: HttpCli[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  [slack, twilio] = await Promise.all([
    startFakePeer({ status: 200, json: { ok: true, channel: 'C0123ABCD', ts: '1712345678.000500' } }),
    startFakePeer({ status: 201, json: { sid: 'SM' + 'c'.repeat(32), status: 'queued' } }),
  ]);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.allSettled([slack?.close(), twilio?.close()]);
});

/** One server per era: every scenario's policy, quiet hours on email for the hour to come, a cap for one client. */
async function serve(): Promise<{ server: HttpCli; publicUrl: string }> {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const now = Date.now();
  const server = await startHttpCli(
    cliEnv({
      NOTIFY_DATA_DIR: tempDataDir('notify-e2e-escalation-'),
      NOTIFY_HTTP_TOKENS: `ops-bot:${BOT},capped-bot:${CAPPED}`,
      NOTIFY_PUBLIC_URL: publicUrl,
      NOTIFY_SCHEDULE_POLL_S: '1',
      SLACK_BOT_TOKEN: 'xoxb-e2e',
      SLACK_API_URL: slack.origin,
      NOTIFY_SLACK_ALLOW: 'C0123ABCD',
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: 'e2e-token',
      TWILIO_FROM: '+14155550111',
      TWILIO_API_URL: twilio.origin,
      NOTIFY_SMS_ALLOW: '+1415',
      NOTIFY_ESCALATIONS: 'oncall=sms:+14155550100@3s,email:lead@example.com@6s;quiet=email:lead@example.com@2s;paged=sms:+14155550100@2s',
      NOTIFY_QUIET_HOURS: `email=${hhmm(now - 60_000)}-${hhmm(now + 3_600_000)}@UTC`,
      NOTIFY_CAPS: 'capped-bot:sms=1/day',
    }),
    ['--port', String(port)],
  );
  servers.push(server);
  return { server, publicUrl };
}

async function connect(server: HttpCli, era: Era, token = BOT): Promise<Client> {
  const client = await connectHttp(server.url, `escalation-${era}`, era, token);
  clients.push(client);
  return client;
}
const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as ToolOutcome;
const out = (r: ToolOutcome) => r.structuredContent as Record<string, unknown> & { id: string; accepted_at: string };

interface Step {
  id: string;
  via: string;
  to: string[];
  due_at: string;
  state: string;
  code?: string;
}

describe.each(ERAS)('escalation over the built CLI, %s client', (era) => {
  let server: HttpCli;
  let publicUrl: string;
  let bot: Client;
  beforeAll(async () => {
    ({ server, publicUrl } = await serve());
    bot = await connect(server, era);
  }, 30_000);

  /** Pages #C0123ABCD with `policy`: the first send's id, when it was accepted, and its Slack message's answer link. */
  async function page(policy: string, client = bot): Promise<{ id: string; at: number; link: string }> {
    const sent = await call(client, 'send_notification', {
      via: 'slack',
      channel: 'C0123ABCD',
      text: `db-1 disk full (${era})`,
      escalate: policy,
    });
    expect(sent.isError, JSON.stringify(sent)).toBeFalsy();
    // Slack's client posts a form: the text, and the answer link it carries.
    const posted = slack.requests.findLast((r) => r.form.text?.startsWith(`db-1 disk full (${era})`))!;
    return { id: out(sent).id, at: Date.parse(out(sent).accepted_at), link: LINK.exec(posted.form.text!)![1]! };
  }
  const smsFor = (id: string) => twilio.requests.filter((r) => r.form.Body?.includes(`Escalates ${id}`));
  const stepsOf = async (id: string, client = bot) => (out(await call(client, 'get_notification', { id })).escalation ?? []) as Step[];
  const answer = (link: string) =>
    fetch(link, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: publicUrl },
      body: 'choice=Acknowledge',
    });

  it('Slack first, SMS after while nobody answers; the SMS says what it escalates; an answer stops the rest', async () => {
    const { id, at, link } = await page('oncall');
    const before = await stepsOf(id);
    expect(before.map((s) => [s.via, s.to, s.state])).toEqual([
      ['sms', ['+14155550100'], 'scheduled'],
      ['email', ['lead@example.com'], 'scheduled'],
    ]);
    // Due from the moment the first send left (its steps are kept just before its provider call): a few ms after it was accepted.
    const [smsLate, emailLate] = before.map((s, i) => Date.parse(s.due_at) - at - [3_000, 6_000][i]!);
    expect(smsLate).toBe(emailLate);
    expect(smsLate).toBeGreaterThanOrEqual(0);
    expect(smsLate).toBeLessThan(1_000);
    await sleepUntil(at + 4_500);
    expect(smsFor(id)).toHaveLength(1);
    expect(smsFor(id)[0]!.form).toMatchObject({ To: '+14155550100' });
    // The step is a notification of its own, which says what it escalates.
    expect(out(await call(bot, 'get_notification', { id: before[0]!.id }))).toMatchObject({ via: 'sms', escalates: id });
    expect((await answer(link)).status).toBe(200);
    const shown = out(await call(bot, 'get_notification', { id }));
    expect(shown.answer).toMatchObject({ choice: 'Acknowledge', by: 'link', via: 'slack' });
    expect((shown.escalation as Step[]).map((s) => [s.via, s.state])).toEqual([
      ['sms', 'sent'],
      ['email', 'cancelled'],
    ]);
    await sleepUntil(at + 7_500);
    expect((await stepsOf(id))[1]!.state).toBe('cancelled');
  }, 30_000);

  it("an answer 1 s before a step's due time cancels it: nothing is sent", async () => {
    const { id, at, link } = await page('oncall');
    await sleepUntil(at + 2_000);
    expect((await answer(link)).status).toBe(200);
    await sleepUntil(at + 5_000);
    expect(smsFor(id)).toEqual([]);
    expect((await stepsOf(id)).map((s) => s.state)).toEqual(['cancelled', 'cancelled']);
  }, 30_000);

  it('an answer 1 s after leaves the step sent, and the answer still lands', async () => {
    const { id, at, link } = await page('oncall');
    await sleepUntil(at + 4_000);
    expect(smsFor(id)).toHaveLength(1);
    expect((await answer(link)).status).toBe(200);
    const shown = out(await call(bot, 'get_notification', { id }));
    expect(shown.answer).toMatchObject({ choice: 'Acknowledge' });
    expect((shown.escalation as Step[]).map((s) => s.state)).toEqual(['sent', 'cancelled']);
  }, 30_000);

  it('retract_notification on the first send cancels the steps left', async () => {
    const { id, at } = await page('oncall');
    const retracted = await call(bot, 'retract_notification', { id });
    expect(retracted.isError, JSON.stringify(retracted)).toBeFalsy();
    await sleepUntil(at + 4_000);
    expect(smsFor(id)).toEqual([]);
    expect((await stepsOf(id)).map((s) => s.state)).toEqual(['cancelled', 'cancelled']);
  }, 30_000);

  it('quiet hours hold a non-urgent step until they end', async () => {
    const { id, at } = await page('quiet');
    await sleepUntil(at + 4_000);
    const [step] = await stepsOf(id);
    expect(step).toMatchObject({ via: 'email', state: 'held' });
    expect(Date.parse(step!.due_at)).toBeGreaterThan(Date.now() + 60_000);
  }, 30_000);

  it('a cap stops a step, CAP_REACHED in its state', async () => {
    const capped = await connect(server, era, CAPPED);
    const used = await call(capped, 'send_notification', { via: 'sms', to: '+14155550123', body: 'uses the day' });
    expect(used.isError, JSON.stringify(used)).toBeFalsy();
    const { id, at } = await page('paged', capped);
    await sleepUntil(at + 4_000);
    expect(smsFor(id)).toEqual([]);
    expect(await stepsOf(id, capped)).toEqual([expect.objectContaining({ via: 'sms', state: 'failed', code: 'CAP_REACHED' })]);
  }, 30_000);
});
