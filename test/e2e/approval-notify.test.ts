/**
 * NOTIFY_APPROVAL_NOTIFY over the built CLI, both protocol eras, under NOTIFY_APPROVAL_MODE=console
 * (SMS needs approval): each held send posts a notice with a link to its console page,
 * - through a dry-run Slack channel: its record is the notice, with the link, and none of the
 *   held send's body or number; Slack sends needing approval too, the notice is not held;
 * - through a live email to smtp-server: the mail arrives with the link; an SMTP refusal of the
 *   notice leaves the held send pending and is one JSON line on stderr;
 * and a target the allowlist refuses stops the start with exit 2, naming the variable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, tempDataDir } from '../helpers/cli.js';
import { connectCli, ERAS, readOutbox, type CliSession, type ToolOutcome } from '../helpers/mcp-cli.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const PUBLIC = 'https://notify.example.com';
const NUMBER = '+14155550123';
const held = (era: string) => ({
  NOTIFY_APPROVAL: 'sms',
  NOTIFY_APPROVAL_MODE: 'console',
  NOTIFY_PUBLIC_URL: PUBLIC,
  NOTIFY_DATA_DIR: tempDataDir(`notify-approval-notify-${era}-`),
});
const sessions: CliSession[] = [];
let smtp: TestSmtpServer;

beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await Promise.allSettled(sessions.map((s) => s.close()));
  await smtp?.close();
});

async function open(env: Record<string, string>, name: string, era: (typeof ERAS)[number]): Promise<CliSession> {
  const s = await connectCli(env, name, era);
  sessions.push(s);
  return s;
}
const sendHeld = async (s: CliSession, body: string): Promise<string> => {
  const r = (await s.client.callTool({ name: 'send_notification', arguments: { via: 'sms', to: NUMBER, body } })) as ToolOutcome;
  expect(r.structuredContent, JSON.stringify(r)).toMatchObject({ status: 'pending_approval' });
  return r.structuredContent!.id as string;
};

async function until<T>(what: string, get: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (let i = 0; ; i++) {
    const got = await get();
    if (got !== undefined) return got;
    if (i > 200) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(ERAS)('approval notice (%s)', (era) => {
  it('posts to a dry-run Slack channel: the record shows the text with the link, not the body or number', async () => {
    // Slack sends need approval too: the notice must still go out, not be held in its turn.
    const env = cliEnv({ ...held(era), NOTIFY_APPROVAL: 'sms,slack', NOTIFY_APPROVAL_NOTIFY: 'slack:#approvals' });
    const s = await open(env, `agent-${era}`, era);
    const id = await sendHeld(s, `secret body ${era}`);
    const notice = await until('the Slack notice', async () => (await readOutbox(env)).find((r) => r.via === 'slack'));
    expect(notice).toMatchObject({ status: 'dry_run', client: 'notify-mcp' });
    const payload = notice.payload as { channel: string; text: string };
    expect(payload.channel).toBe('#approvals');
    expect(payload.text).toContain(`<${PUBLIC}/console/notifications/${id}>`);
    expect(payload.text).toContain(id);
    expect(payload.text).toContain(`agent-${era}`);
    expect(payload.text).toMatch(/sms send/);
    expect(payload.text).not.toContain('secret body');
    expect(payload.text).not.toContain('4155550123');
    // The held send is untouched, and the notice itself was never held.
    const rows = await readOutbox(env);
    expect(rows.find((r) => r.id === id)?.status).toBe('pending_approval');
    expect(rows.filter((r) => r.via === 'slack')).toHaveLength(1);
  });

  it('mails a live email notice through smtp-server with the link; a refused notice leaves the send pending and logs one JSON line', async () => {
    const env = cliEnv({
      ...held(era),
      NOTIFY_APPROVAL_NOTIFY: 'email:ops@example.com',
      SMTP_URL: smtp.url,
      EMAIL_FROM: 'notify-mcp <alerts@notify.test>',
      NOTIFY_EMAIL_ALLOW: 'ops@example.com',
    });
    const s = await open(env, `mailer-${era}`, era);
    const before = smtp.received.length;
    const id = await sendHeld(s, `mail secret ${era}`);
    const mail = await until('the notice mail', () => smtp.received.slice(before).find((m) => m.raw.includes(id)));
    expect(mail.to).toEqual(['ops@example.com']);
    expect(mail.raw).toContain(`Subject: Approval needed: sms send ${id}`);
    // Quoted-printable may fold the link's line: compare the unfolded text.
    const text = mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    expect(text).toContain(`${PUBLIC}/console/notifications/${id}`);
    expect(text).not.toContain('mail secret');
    expect(text).not.toContain('4155550123');
    const notice = await until('the notice record', async () =>
      (await readOutbox(env)).find((r) => r.via === 'email' && r.status === 'sent'),
    );
    expect(notice.client).toBe('notify-mcp');

    smtp.replies.push({ kind: 'error', code: 550, message: 'mailbox unavailable' });
    const refused = await sendHeld(s, `refused ${era}`);
    const line = await until('the failure line', () =>
      s.transport.stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'approval notice failed' && l.notificationId === refused),
    );
    expect(line).toMatchObject({ via: 'email' });
    expect(JSON.stringify(line)).not.toContain('refused ' + era);
    expect((await readOutbox(env)).find((r) => r.id === refused)?.status).toBe('pending_approval');
  });
});

describe('approval notice refusals at start', () => {
  it('exits 2 for a target the allowlist does not allow, naming the variable', async () => {
    const env = cliEnv({
      ...held('refuse'),
      NOTIFY_APPROVAL_NOTIFY: 'slack:#random',
      SLACK_BOT_TOKEN: 'xoxb-1',
      NOTIFY_SLACK_ALLOW: '#approvals',
    });
    const { code, stderr } = await runCli(['schema'], env);
    expect(code).toBe(2);
    expect(stderr).toContain('NOTIFY_APPROVAL_NOTIFY');
    expect(stderr).toContain('NOTIFY_SLACK_ALLOW');
  });
});
