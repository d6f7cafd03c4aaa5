/**
 * Time, end to end over the built CLI (stdio), in both protocol eras, live email to a real
 * SMTP peer (smtp-server): send_at answered `scheduled` at once and sent once at its time,
 * get_notification and `outbox --waiting` showing it; quiet hours holding a send (urgent
 * held by default, passing with NOTIFY_QUIET_HOURS_URGENT=allow); caps answering CAP_REACHED
 * with resets_at, and doctor saying what is left; `notify-mcp worker` releasing what a stdio
 * server scheduled after that server exited, and expiring what is older than the grace.
 * Real waits of a few seconds: the CLI runs on the real clock.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cliEnv, runCli, tempDataDir } from '../helpers/cli.js';
import { connectCli, ERAS, errorOf, type CliSession, type ToolOutcome } from '../helpers/mcp-cli.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

let smtp: TestSmtpServer;
const dirs: string[] = [];
const sessions: CliSession[] = [];
const workers: ChildProcess[] = [];

function env(extra: Record<string, string> = {}): Record<string, string> {
  const dir = tempDataDir('notify-e2e-schedule-');
  dirs.push(dir);
  return cliEnv({
    NOTIFY_DATA_DIR: dir,
    SMTP_URL: smtp.url,
    EMAIL_FROM: 'notify-mcp <alerts@notify.test>',
    NOTIFY_EMAIL_ALLOW: 'example.com',
    ...extra,
  });
}

const mail = (to: string | string[], extra: Record<string, unknown> = {}) => ({
  via: 'email',
  to,
  subject: 'Deploy',
  body_html: '<p>done</p>',
  ...extra,
});
const send = (s: CliSession, args: Record<string, unknown>) =>
  s.client.callTool({ name: 'send_notification', arguments: args }) as Promise<ToolOutcome>;
const get = (s: CliSession, id: string) => s.client.callTool({ name: 'get_notification', arguments: { id } }) as Promise<ToolOutcome>;
const received = (to: string) => smtp.received.filter((m) => m.to.includes(to));

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function open(e: Record<string, string>, era: (typeof ERAS)[number], name = 'scheduler'): Promise<CliSession> {
  const s = await connectCli(e, name, era);
  sessions.push(s);
  return s;
}

function startWorker(e: Record<string, string>): ChildProcess & { stderrText: () => string } {
  const child = spawn(process.execPath, [CLI, 'worker'], { env: e, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  workers.push(child);
  return Object.assign(child, { stderrText: () => err });
}

beforeAll(async () => {
  smtp = await startSmtpServer();
});

afterAll(async () => {
  await Promise.allSettled(sessions.map((s) => s.close()));
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await smtp?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(ERAS)('retract_notification of a waiting send over the built CLI (%s)', (era) => {
  it('cancels a scheduled send, which then never leaves; a second retract and another client are refused', async () => {
    const e = env();
    const s = await open(e, era);
    const to = `retract-${era}@example.com`;
    // Far enough ahead that a loaded machine's slow second session does not outrun it.
    const sendAt = new Date(Date.now() + 8_000).toISOString().replace('Z', '+00:00');
    const { id } = (await send(s, mail(to, { send_at: sendAt }))).structuredContent as { id: string };
    const other = await open(e, era, 'someone-else');
    expect(errorOf((await other.client.callTool({ name: 'retract_notification', arguments: { id } })) as ToolOutcome)).toMatchObject({
      code: 'NOT_FOUND',
    });
    const r = (await s.client.callTool({ name: 'retract_notification', arguments: { id } })) as ToolOutcome;
    expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ id, via: 'email', status: 'cancelled' });
    expect((await get(s, id)).structuredContent).toMatchObject({ id, status: 'cancelled' });
    const again = (await s.client.callTool({ name: 'retract_notification', arguments: { id } })) as ToolOutcome;
    expect(errorOf(again)).toMatchObject({ code: 'INVALID_FIELD' });
    // Past its time, nothing arrived: the release found it cancelled.
    await new Promise((r) => setTimeout(r, Date.parse(sendAt) + 1_500 - Date.now()));
    expect(received(to)).toEqual([]);
  });
});

describe.each(ERAS)('time over the built CLI (%s)', (era) => {
  it('send_at: answered scheduled at once, waiting in the outbox, sent once at its time under the same id', async () => {
    const e = env();
    const s = await open(e, era);
    const to = `sched-${era}@example.com`;
    const sendAt = new Date(Date.now() + 6_000).toISOString().replace('Z', '+00:00');
    const r = await send(s, mail(to, { send_at: sendAt }));
    expect(r.isError).toBeFalsy();
    const result = r.structuredContent as { id: string; status: string; send_at: string };
    expect(result).toMatchObject({ via: 'email', status: 'scheduled', send_at: new Date(sendAt).toISOString() });
    expect(received(to)).toEqual([]);
    expect((await get(s, result.id)).structuredContent).toMatchObject({ id: result.id, status: 'scheduled', send_at: result.send_at });

    const waiting = await runCli(['outbox', '--waiting'], e);
    expect(waiting.code).toBe(0);
    expect(waiting.stderr).not.toContain('nothing is waiting');
    expect(
      waiting.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    ).toEqual([expect.objectContaining({ id: result.id, via: 'email', state: 'scheduled', client: 'scheduler' })]);

    await until('the scheduled mail', () => received(to).length > 0);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(sendAt));
    await until('its record', async () => (await get(s, result.id)).structuredContent?.status === 'sent');
    const after = (await get(s, result.id)).structuredContent!;
    expect(after).toMatchObject({ status: 'sent', send_at: result.send_at });
    expect(received(to)[0]!.raw).toMatch(new RegExp(`X-Notification-Id: ${result.id}`, 'i'));
    // Once: nothing more arrives, and nothing waits.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(received(to).length).toBe(1);
    // stdout stays JSON lines (empty), and stderr says why it is empty.
    const none = await runCli(['outbox', '--waiting'], e);
    expect(none.stdout.trim()).toBe('');
    expect(none.stderr).toContain('notify-mcp: nothing is waiting (no scheduled or held sends)');
  });

  it('send_at refused with a coded error: not RFC 3339 with an offset, more than 30 days ahead; the server keeps serving', async () => {
    const s = await open(env(), era);
    const noOffset = await send(s, mail('a@example.com', { send_at: '2030-01-01T09:00:00' }));
    expect(errorOf(noOffset)).toMatchObject({ code: 'INVALID_FIELD', path: '/send_at' });
    const far = await send(s, mail('a@example.com', { send_at: new Date(Date.now() + 31 * 86_400_000).toISOString() }));
    expect(errorOf(far)).toMatchObject({ code: 'INVALID_FIELD', path: '/send_at' });
    expect(errorOf(far).message).toMatch(/more than 30 days ahead/);
    const now = await send(s, mail(`ok-${era}@example.com`));
    expect(now.structuredContent).toMatchObject({ status: 'sent' });
  });

  it('quiet hours: a send inside the window is held with release_at; urgent is held unless allowed, then passes', async () => {
    // A window around now in UTC, so the test holds whatever the hour.
    const m = new Date().getUTCHours() * 60 + new Date().getUTCMinutes();
    const hhmm = (x: number) =>
      `${String(Math.floor(((x + 1440) % 1440) / 60)).padStart(2, '0')}:${String((x + 1440) % 60).padStart(2, '0')}`;
    const window = `email=${hhmm(m - 60)}-${hhmm(m + 60)}@UTC`;
    const denied = await open(env({ NOTIFY_QUIET_HOURS: window }), era);
    const to = `quiet-${era}@example.com`;
    const held = (await send(denied, mail(to))).structuredContent as { id: string; status: string; release_at: string };
    expect(held.status).toBe('held');
    expect(Date.parse(held.release_at)).toBeGreaterThan(Date.now() + 55 * 60_000);
    expect((await get(denied, held.id)).structuredContent).toMatchObject({ status: 'held', release_at: held.release_at });
    expect((await send(denied, mail(to, { urgent: true }))).structuredContent).toMatchObject({ status: 'held' });
    await until('the held urgent send to be logged', () => denied.transport.stderr.includes('urgent send held by quiet hours'));

    const allowed = await open(env({ NOTIFY_QUIET_HOURS: window, NOTIFY_QUIET_HOURS_URGENT: 'allow' }), era);
    expect((await send(allowed, mail(to, { urgent: true }))).structuredContent).toMatchObject({ status: 'sent' });
    await until('the urgent pass to be logged', () => allowed.transport.stderr.includes('urgent send passed quiet hours'));
    expect(received(to).length).toBe(1);
  });

  it('caps: past the cap CAP_REACHED with resets_at, nothing sent; doctor says what is left', async () => {
    const e = env({ NOTIFY_CAPS: '*:email_recipients=3/hour' });
    const s = await open(e, era, 'capped-bot');
    const to = `cap-${era}@example.com`;
    const first = await send(s, mail([to, `cc-${era}@example.com`]));
    expect(first.structuredContent, JSON.stringify(first.structuredContent)).toMatchObject({ status: 'sent' });
    const hourEnd = (t: number) => Math.ceil((t + 1) / 3_600_000) * 3_600_000;
    const asked = Date.now();
    const refused = await send(s, mail([to, `cc-${era}@example.com`]));
    const err = errorOf(refused) as { code: string; resets_at?: string; message: string };
    expect(err.code).toBe('CAP_REACHED');
    // The end of the hour the send was refused in, which a slow call may have crossed into.
    expect([hourEnd(asked), hourEnd(Date.now())]).toContain(Date.parse(err.resets_at!));
    expect(received(to).length).toBe(1);
    // One recipient still fits.
    expect((await send(s, mail(to))).structuredContent).toMatchObject({ status: 'sent' });
    const doctor = await runCli(['doctor'], e);
    expect(doctor.stdout).toMatch(/caps: capped-bot: 0 of 3 email_recipients per hour left, 3 used, resets /);
    expect(doctor.stdout).toMatch(/caps: each client: 3 of 3 email_recipients per hour left/);
  });

  it('notify-mcp worker releases what a stdio server scheduled after that server exited; an older one expires', async () => {
    const e = env({ NOTIFY_SCHEDULE_GRACE_S: '3' });
    const to = `worker-${era}@example.com`;
    const late = `late-${era}@example.com`;
    const s = await open(e, era);
    // `soon` is still ahead (or well within the grace) when a slow-starting worker gets to it.
    const soon = (await send(s, mail(to, { send_at: new Date(Date.now() + 7_000).toISOString() }))).structuredContent as { id: string };
    const oldAt = Date.now() + 1_000;
    const old = (await send(s, mail(late, { send_at: new Date(oldAt).toISOString() }))).structuredContent as { id: string };
    await s.close();
    // Nothing runs until `old` is more than the 3 s grace late.
    await new Promise((r) => setTimeout(r, oldAt + 3_500 - Date.now()));
    const worker = startWorker(e);
    await until('the worker to release the mail', () => received(to).length > 0);
    await until('the expiry to be logged', () => worker.stderrText().includes('scheduled send expired'));
    const records = (await runCli(['outbox'], e)).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; status: string });
    expect(records.find((r) => r.id === soon.id)).toMatchObject({ status: 'sent' });
    expect(records.find((r) => r.id === old.id)).toBeUndefined();
    expect(received(late)).toEqual([]);
    const reader = await open(e, era);
    expect((await get(reader, old.id)).structuredContent).toMatchObject({ status: 'expired' });
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
    expect(worker.exitCode).toBe(0);
    expect(received(to).length).toBe(1);
  });
});
