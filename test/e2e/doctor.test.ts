/**
 * `notify-mcp doctor` over the built CLI, as an operator runs it: against a real SMTP server
 * (smtp-server), Prism serving Twilio's API description, and the scriptable fakes where
 * Prism cannot answer (Twilio's messaging-service API is not in the 2010 spec; the Slack
 * spec has auth.test and conversations.info as GET, which the WebClient never sends).
 * Passing and failing configurations; doctor sends nothing and creates nothing.
 */
import { existsSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { cliEnv, runCli, tempDataDir } from '../helpers/cli.js';
import { startFakePeer, type FakePeer } from '../helpers/fakes.js';
import { assertBuilt } from '../helpers/mcp-cli.js';
import { prismUnavailableReason, startPrism, type PrismPeer } from '../helpers/prism.js';
import { SMTP_PASS, SMTP_USER, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const SID = 'AC' + 'a'.repeat(32);
/** The number Prism's example lists for the account (IncomingPhoneNumbers). */
const PRISM_NUMBER = '+18089255327';
const CHANNEL = 'C0123ABCD';

interface Line {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

async function doctor(extra: Record<string, string>, args: string[] = []) {
  const dataDir = tempDataDir('notify-doctor-');
  const r = await runCli(['doctor', '--json', ...args], cliEnv({ NOTIFY_DATA_DIR: dataDir, ...extra }));
  const report = JSON.parse(r.stdout) as { ok: boolean; checks: Line[] };
  const line = (name: string) => report.checks.find((c) => c.name === name);
  return { ...r, report, line, dataDir };
}

const skipReason = prismUnavailableReason();
const describePrism = skipReason ? describe.skip : describe;

describe('notify-mcp doctor', () => {
  beforeAll(assertBuilt);

  it('all dry-run: every line passes, exit 0, and no store is created', async () => {
    const r = await doctor({});
    expect(r.code).toBe(0);
    expect(r.report.ok).toBe(true);
    expect(r.report.checks.map((c) => c.name)).toEqual([
      'configuration',
      'email',
      'sms',
      'slack',
      'store',
      'http tokens',
      'http hosts',
      'tools',
    ]);
    expect(r.line('sms')!.detail).toMatch(/^dry-run/);
    expect(r.line('store')!.detail).toMatch(/no SQLite store yet/);
    expect(existsSync(join(r.dataDir, 'notify.db'))).toBe(false);
  });

  it('prints one ✓/✗ line per check, the fix under each failure, and exits 1', async () => {
    const r = await runCli(['doctor', '--host', '0.0.0.0'], cliEnv({ NOTIFY_DATA_DIR: tempDataDir('notify-doctor-') }));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^✓ configuration: /m);
    expect(r.stdout).toMatch(/^✗ http tokens: none set, and --http would bind 0\.0\.0\.0.*\n {4}fix: set NOTIFY_HTTP_TOKENS/m);
    expect(r.stdout).toMatch(/1 of \d+ checks failed\.$/m);
  });

  it('a setting that does not read is the one failed line, with the fix', async () => {
    const r = await doctor({ DATABASE_URL: 'mysql://u@db/x' });
    expect(r.code).toBe(1);
    expect(r.report.checks).toEqual([
      {
        name: 'configuration',
        ok: false,
        detail: expect.stringMatching(/^DATABASE_URL must start with postgres:\/\//),
        fix: expect.any(String),
      },
    ]);
  });

  it('HTTP settings: read auth without tokens fails; tokens and allowed hosts are reported', async () => {
    const bad = await doctor({ NOTIFY_READ_AUTH: '1' });
    expect(bad.line('http read auth')).toMatchObject({ ok: false, fix: expect.stringContaining('NOTIFY_HTTP_TOKENS') });
    const good = await doctor({ NOTIFY_HTTP_TOKENS: 'ops:abcdefghijklmnop1', NOTIFY_HTTP_ALLOWED_HOSTS: 'notify.example.com' }, [
      '--host',
      '0.0.0.0',
    ]);
    expect(good.code).toBe(0);
    expect(good.line('http tokens')!.detail).toMatch(/^1 token for 1 client \(ops\)/);
    expect(good.line('http hosts')!.detail).toContain('notify.example.com');
  });

  it('store: current passes; behind this build fails with the fix; either way it is read, not migrated', async () => {
    const dataDir = tempDataDir('notify-doctor-');
    const file = join(dataDir, 'notify.db');
    const store = await openSqliteStore({ file, log: silentLogger });
    await store.close();
    const env = cliEnv({ NOTIFY_DATA_DIR: dataDir });
    const current = JSON.parse((await runCli(['doctor', '--json'], env)).stdout) as { checks: Line[] };
    expect(current.checks.find((c) => c.name === 'store')).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/opens; migrations current \(version \d+\)/),
    });

    const db = new Database(file);
    db.prepare('DELETE FROM schema_migrations WHERE version > 1').run();
    db.close();
    const behind = await runCli(['doctor', '--json'], env);
    expect(behind.code).toBe(1);
    const line = (JSON.parse(behind.stdout) as { checks: Line[] }).checks.find((c) => c.name === 'store');
    expect(line).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/is at schema version 1 of \d+/),
      fix: expect.stringContaining('start notify-mcp once'),
    });
    const after = new Database(file, { readonly: true });
    expect(after.prepare('SELECT MAX(version) AS v FROM schema_migrations').get()).toEqual({ v: 1 });
    after.close();
  });

  describe('email (a real SMTP server)', () => {
    let smtp: TestSmtpServer;
    beforeAll(async () => {
      smtp = await startSmtpServer();
    });
    afterAll(async () => {
      await smtp?.close();
    });
    const email = (url: string) => ({ SMTP_URL: url, EMAIL_FROM: 'alerts@example.com', NOTIFY_EMAIL_ALLOW: 'example.com' });

    it('passes with the right credentials, and sends nothing', async () => {
      const r = await doctor(email(smtp.url));
      expect(r.line('email')).toMatchObject({ ok: true, detail: 'live; NOTIFY_EMAIL_ALLOW: 1 allowed (example.com)' });
      expect(r.line('email smtp')).toMatchObject({ ok: true, detail: expect.stringContaining('accepted the connection') });
      expect(r.code).toBe(0);
      expect(smtp.dataCount()).toBe(0);
    });

    it('fails on a wrong password, never printing it, with the fix', async () => {
      const wrong = smtp.url.replace(`${SMTP_USER}:${SMTP_PASS}`, `${SMTP_USER}:not-the-password`);
      const r = await doctor(email(wrong));
      expect(r.code).toBe(1);
      expect(r.line('email smtp')).toMatchObject({
        ok: false,
        detail: expect.stringMatching(/EAUTH 535/),
        fix: expect.stringContaining('user and password in SMTP_URL'),
      });
      expect(r.stdout).not.toContain('not-the-password');
    });

    it('with no credentials, fails against a relay that requires AUTH and says to set them; sends nothing', async () => {
      const r = await doctor(email(`smtp://127.0.0.1:${smtp.port}`));
      expect(r.code).toBe(1);
      expect(r.line('email smtp')).toMatchObject({
        ok: false,
        detail: expect.stringMatching(/requires AUTH and SMTP_URL has no credentials: it answered 530/),
        fix: expect.stringContaining('set SMTP credentials'),
      });
      expect(smtp.received).toEqual([]);
    });

    it('with no credentials, passes against a relay that takes mail without AUTH, and delivers nothing', async () => {
      const open = await startSmtpServer({ authOptional: true });
      try {
        const r = await doctor(email(`smtp://127.0.0.1:${open.port}`));
        expect(r.line('email smtp')).toMatchObject({
          ok: true,
          detail: expect.stringContaining('no credentials in SMTP_URL, and it took a sender without AUTH; nothing was sent'),
        });
        expect(r.code).toBe(0);
        expect(open.received).toEqual([]);
      } finally {
        await open.close();
      }
    });

    it('says when AUTH went unencrypted to a relay on this machine', async () => {
      const r = await doctor(email(smtp.url));
      expect(r.line('email smtp')!.detail).toContain(
        'unencrypted (it offered no STARTTLS) and the credentials (AUTH) (AUTH unencrypted: the relay is on this machine)',
      );
    });

    const lan = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && !a.internal && a.family === 'IPv4')?.address;
    it.skipIf(lan === undefined)(
      `refuses to send the password in clear text to a relay elsewhere${lan ? '' : ' [skipped: this machine has no non-loopback IPv4 address]'}`,
      async () => {
        const remote = await startSmtpServer({ host: '0.0.0.0' });
        try {
          const r = await doctor(email(`smtp://${SMTP_USER}:${SMTP_PASS}@${lan}:${remote.port}`));
          expect(r.code).toBe(1);
          expect(r.line('email smtp')).toMatchObject({
            ok: false,
            detail: expect.stringContaining('AUTH would send the SMTP password in clear text; it was not sent'),
            fix: expect.stringContaining('smtps://'),
          });
          expect(r.stdout).not.toContain(SMTP_PASS);
        } finally {
          await remote.close();
        }
      },
    );

    it('fails on a port where nothing listens', async () => {
      const r = await doctor(email(`smtp://${SMTP_USER}:${SMTP_PASS}@127.0.0.1:1`));
      expect(r.line('email smtp')).toMatchObject({ ok: false, fix: expect.stringContaining('host and port in SMTP_URL') });
    });
  });

  describePrism(`sms (Prism serving Twilio's spec)${skipReason ? ` [skipped: ${skipReason}]` : ''}`, () => {
    let prism: PrismPeer;
    beforeAll(async () => {
      prism = await startPrism('twilio');
    }, 60_000);
    afterAll(async () => {
      await prism?.stop();
    });
    const sms = (from: string) => ({
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: 'token',
      TWILIO_FROM: from,
      TWILIO_API_URL: prism.origin,
      NOTIFY_SMS_ALLOW: '+1',
    });

    it('passes: the account is active and TWILIO_FROM is one of its numbers', async () => {
      const r = await doctor(sms(PRISM_NUMBER));
      expect(r.line('sms account')).toMatchObject({ ok: true, detail: expect.stringContaining('is active') });
      expect(r.line('sms sender')).toMatchObject({ ok: true, detail: `TWILIO_FROM ${PRISM_NUMBER} is a number of this account` });
      expect(r.code).toBe(0);
    });

    it('fails: a TWILIO_FROM the account does not have', async () => {
      const r = await doctor(sms('+14155550111'));
      expect(r.code).toBe(1);
      expect(r.line('sms sender')).toMatchObject({ ok: false, fix: expect.stringContaining('set TWILIO_FROM to one of its numbers') });
    });
  });

  describe('sms (a fake Twilio: credentials and messaging services)', () => {
    let twilio: FakePeer;
    beforeAll(async () => {
      twilio = await startFakePeer();
    });
    afterAll(async () => {
      await twilio?.close();
    });
    const service = 'MG' + '0'.repeat(32);
    const env = () => ({
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: 'token',
      TWILIO_MESSAGING_SERVICE_SID: service,
      TWILIO_API_URL: twilio.origin,
      NOTIFY_SMS_ALLOW: '*',
    });
    const account = { status: 200, json: { sid: SID, status: 'active', friendly_name: 'ops' } };

    it('passes when the messaging service exists; fails with the fix when it does not', async () => {
      twilio.replies.push(account, { status: 200, json: { sid: service, friendly_name: 'alerts' } });
      const ok = await doctor(env());
      expect(ok.line('sms sender')).toMatchObject({ ok: true, detail: `messaging service ${service} (alerts) exists` });
      expect(twilio.requests.at(-1)!.path).toBe(`/v1/Services/${service}`);

      twilio.replies.push(account, { status: 404, json: { code: 20404, message: 'The requested resource was not found', status: 404 } });
      const missing = await doctor(env());
      expect(missing.code).toBe(1);
      expect(missing.line('sms sender')).toMatchObject({ ok: false, fix: expect.stringContaining('TWILIO_MESSAGING_SERVICE_SID') });
    });

    it('fails on credentials Twilio refuses, and checks nothing after', async () => {
      twilio.replies.push({ status: 401, json: { code: 20003, message: 'Authenticate', status: 401 } });
      const r = await doctor(env());
      expect(r.line('sms account')).toMatchObject({ ok: false, fix: expect.stringContaining('TWILIO_AUTH_TOKEN') });
      expect(r.line('sms sender')).toBeUndefined();
      expect(twilio.requests.every((q) => q.method === 'GET')).toBe(true);
    });
  });

  describe('slack (a fake Web API)', () => {
    let slack: FakePeer;
    beforeAll(async () => {
      slack = await startFakePeer();
    });
    afterAll(async () => {
      await slack?.close();
    });
    const env = () => ({ SLACK_BOT_TOKEN: 'xoxb-test', SLACK_API_URL: slack.origin, NOTIFY_SLACK_ALLOW: `${CHANNEL},C0999ZZZZ,#ops` });
    const auth = { status: 200, json: { ok: true, user: 'notifybot', user_id: 'U1', team: 'Acme', team_id: 'T1' } };

    it('passes auth.test, and reports each allowlisted channel ID: member, not a member (with the invite), not found', async () => {
      slack.replies.push(
        auth,
        { status: 200, json: { ok: true, channel: { id: CHANNEL, name: 'alerts', is_member: true } } },
        { status: 200, json: { ok: true, channel: { id: 'C0999ZZZZ', name: 'random', is_member: false } } },
      );
      const r = await doctor(env());
      expect(r.line('slack auth')).toMatchObject({ ok: true, detail: 'token of notifybot in Acme accepted' });
      expect(r.line(`slack channel ${CHANNEL}`)).toMatchObject({ ok: true, detail: 'notifybot is a member (#alerts)' });
      expect(r.line('slack channel C0999ZZZZ')).toMatchObject({ ok: false, fix: 'invite it: /invite @notifybot in that channel' });
      expect(r.line('slack channel #ops')).toMatchObject({ ok: true, detail: expect.stringContaining('not looked up') });
      expect(r.code).toBe(1);
      expect(slack.requests.map((q) => q.path)).toEqual(['/auth.test', '/conversations.info', '/conversations.info']);
      expect(slack.requests.some((q) => q.path.includes('chat.'))).toBe(false);
    });

    it('fails on a token Slack refuses, with the fix', async () => {
      slack.replies.push({ status: 200, json: { ok: false, error: 'invalid_auth' } });
      const r = await doctor(env());
      expect(r.code).toBe(1);
      expect(r.line('slack auth')).toMatchObject({
        ok: false,
        detail: 'Slack answered invalid_auth',
        fix: expect.stringContaining('SLACK_BOT_TOKEN'),
      });
    });
  });
});
