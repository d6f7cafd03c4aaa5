/**
 * Everyday email over the built CLI, in both protocol eras: cc, bcc, display names and
 * attachments, live to smtp-server (the envelope holds every recipient, no header shows a
 * bcc, the attachments parse back byte-equal with mailparser), in a dry run (the record shows
 * what would leave, bcc and each attachment included), and under approval (the question
 * lists the hidden copies and every file with its SHA-256).
 */
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/client';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askingClient } from '../helpers/approval.js';
import { ChildStdioTransport, cliEnv, tempDataDir } from '../helpers/cli.js';
import { connectCli, ERAS, errorOf, rawStdio, readOutbox, type CliSession, type Era, type ToolOutcome } from '../helpers/mcp-cli.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(64, 7)]);
const CSV = Buffer.from('host,disk\nweb-1,95%\n');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const MAIL = {
  via: 'email',
  to: 'Jane Doe <jane@example.com>',
  cc: ['Ops Team <ops@example.com>'],
  bcc: ['Audit <audit@example.com>', 'records@example.com'],
  subject: 'Disk report',
  body_html: '<p>See the attached report.</p>',
  attachments: [
    { filename: 'chart.png', content_base64: PNG.toString('base64') },
    { filename: 'disk.csv', content_base64: CSV.toString('base64'), content_type: 'text/csv' },
  ],
};

let smtp: TestSmtpServer;
const dirs: string[] = [];
const sessions: CliSession[] = [];
const transports: ChildStdioTransport[] = [];

function env(extra: Record<string, string> = {}): Record<string, string> {
  const dir = tempDataDir('notify-e2e-mail-');
  dirs.push(dir);
  return cliEnv({ NOTIFY_DATA_DIR: dir, ...extra });
}
async function connect(e: Record<string, string>, era: Era): Promise<CliSession> {
  const s = await connectCli(e, `mail-${era}`, era);
  sessions.push(s);
  return s;
}
const send = async (client: Client, args: Record<string, unknown>) =>
  (await client.callTool({ name: 'send_notification', arguments: args })) as ToolOutcome;

beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await Promise.allSettled([...sessions.map((s) => s.close()), ...transports.map((t) => t.close())]);
  await smtp?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(ERAS)('everyday email, %s client', (era) => {
  const liveEnv = () => env({ SMTP_URL: smtp.url, EMAIL_FROM: 'notify-mcp <alerts@notify.test>', NOTIFY_EMAIL_ALLOW: 'example.com' });

  it('live: every recipient on the envelope, no bcc in any header, attachments byte-equal', async () => {
    const s = await connect(liveEnv(), era);
    const before = smtp.received.length;
    const result = await send(s.client, MAIL);
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ via: 'email', status: 'sent' });
    expect(smtp.received.length).toBe(before + 1);
    const got = smtp.received.at(-1)!;
    expect([...got.to].sort()).toEqual(['audit@example.com', 'jane@example.com', 'ops@example.com', 'records@example.com']);

    const head = got.raw.slice(0, got.raw.indexOf('\r\n\r\n'));
    expect(head).not.toMatch(/^bcc:/im);
    expect(got.raw).not.toContain('audit@example.com');
    expect(got.raw).not.toContain('records@example.com');

    const parsed = await simpleParser(got.raw);
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value : []).toEqual([{ address: 'jane@example.com', name: 'Jane Doe' }]);
    expect(parsed.cc && !Array.isArray(parsed.cc) ? parsed.cc.value : []).toEqual([{ address: 'ops@example.com', name: 'Ops Team' }]);
    expect(parsed.bcc).toBeUndefined();
    expect(parsed.text).toContain('See the attached report.');
    expect(parsed.attachments.map((a) => [a.filename, a.contentType])).toEqual([
      ['chart.png', 'image/png'],
      ['disk.csv', 'text/csv'],
    ]);
    expect(parsed.attachments[0]!.content.equals(PNG)).toBe(true);
    expect(parsed.attachments[1]!.content.equals(CSV)).toBe(true);
  });

  it('live: the allowlist judges each bcc by its address alone, and nothing is sent', async () => {
    const s = await connect(liveEnv(), era);
    const before = smtp.received.length;
    const err = errorOf(await send(s.client, { ...MAIL, bcc: ['Jane Doe <exfil@attacker.example>'] }));
    expect(err.code).toBe('RECIPIENT_NOT_ALLOWED');
    expect(err.message).toContain('NOTIFY_EMAIL_ALLOW');
    expect(smtp.received.length).toBe(before);
    // Refused calls leave the server serving.
    expect(
      (await send(s.client, { via: 'email', to: 'Ops <ops@example.com>', subject: 'ok', body_html: '<p>ok</p>' })).isError,
    ).toBeFalsy();
  });

  it('dry run: the record shows the envelope with every bcc, the bcc list and each attachment, the MIME no bcc', async () => {
    const e = env();
    const s = await connect(e, era);
    const result = await send(s.client, MAIL);
    expect(result.structuredContent).toMatchObject({ status: 'dry_run' });
    const [row] = await readOutbox(e);
    const payload = row!.payload as { envelope: { to: string[] }; bcc: string[]; attachments: unknown[]; raw: string };
    expect(payload.envelope.to).toEqual(['jane@example.com', 'ops@example.com', 'audit@example.com', 'records@example.com']);
    expect(payload.bcc).toEqual(MAIL.bcc);
    expect(payload.attachments).toEqual([
      { filename: 'chart.png', content_type: 'image/png', size: PNG.length, sha256: sha(PNG) },
      { filename: 'disk.csv', content_type: 'text/csv', size: CSV.length, sha256: sha(CSV) },
    ]);
    expect(payload.raw).not.toMatch(/^bcc:/im);
    const parsed = await simpleParser(payload.raw);
    expect(parsed.attachments[0]!.content.equals(PNG)).toBe(true);
  });

  it('refuses a path for the bytes, a type the bytes contradict, and attachments on SMS, each with advice', async () => {
    const s = await connect(env(), era);
    const path = errorOf(await send(s.client, { ...MAIL, attachments: [{ filename: 'passwd', content_base64: '/etc/passwd' }] }));
    expect(path).toMatchObject({ code: 'INVALID_FIELD' });
    expect(path.message).toMatch(/never reads a file or fetches a URL/);
    const lie = errorOf(
      await send(s.client, {
        ...MAIL,
        attachments: [{ filename: 'chart.pdf', content_base64: PNG.toString('base64'), content_type: 'application/pdf' }],
      }),
    );
    expect(lie.message).toMatch(/says application\/pdf but the bytes are image\/png/);
    const sms = errorOf(await send(s.client, { via: 'sms', to: '+14155550123', body: 'hi', attachments: MAIL.attachments }));
    expect(sms).toMatchObject({ code: 'FIELD_NOT_ON_CHANNEL' });
    expect(sms.message).toMatch(/set via to email/);
  });

  it('approval: the question lists cc, bcc and each attachment with its size and SHA-256', async () => {
    const asking = askingClient(`approver-${era}`, era, 'accept');
    const transport = new ChildStdioTransport([], env({ NOTIFY_APPROVAL: 'email' }));
    transports.push(transport);
    await asking.client.connect(transport);
    const result = await send(asking.client, MAIL);
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    const q = asking.questions[0]!;
    expect(q).toContain('Cc: Ops Team <ops@example.com>');
    expect(q).toContain('Bcc (in no header): Audit <audit@example.com>, records@example.com');
    expect(q).toContain(`Attachment 1: chart.png (image/png, ${PNG.length} bytes, sha256 ${sha(PNG)})`);
    expect(q).toContain(`Attachment 2: disk.csv (text/csv, ${CSV.length} bytes, sha256 ${sha(CSV)})`);
  });
});

describe('message caps follow the attachment cap', () => {
  it('takes a call with attachments over 1 MiB, and says which variable sets the cap when it refuses', async () => {
    const s = await connect(env({ NOTIFY_EMAIL_MAX_ATTACHMENT_BYTES: String(1536 * 1024) }), 'legacy');
    const big = Buffer.alloc(1400 * 1024, 'a');
    const ok = await send(s.client, {
      via: 'email',
      to: 'ops@example.com',
      subject: 's',
      body_html: '<p>x</p>',
      attachments: [{ filename: 'big.txt', content_base64: big.toString('base64') }],
    });
    expect(ok.isError, JSON.stringify(ok.structuredContent).slice(0, 300)).toBeFalsy();
    // Over the attachment cap but within the message cap: the union's coded answer.
    const overCap = Buffer.alloc(2 * 1024 * 1024, 'a');
    const capped = errorOf(
      await send(s.client, {
        via: 'email',
        to: 'ops@example.com',
        subject: 's',
        body_html: '<p>x</p>',
        attachments: [{ filename: 'big.txt', content_base64: overCap.toString('base64') }],
      }),
    );
    expect(capped).toMatchObject({ code: 'TOO_LONG' });
    expect(capped.message).toMatch(/at most 1.5 MiB \(NOTIFY_EMAIL_MAX_ATTACHMENT_BYTES\)/);
    // Over the message cap: the transport refuses the line, says what grew its cap, and serves on.
    const transport = new ChildStdioTransport([], env({ NOTIFY_EMAIL_MAX_ATTACHMENT_BYTES: String(1536 * 1024) }));
    transports.push(transport);
    const raw = await rawStdio(transport);
    const over = Buffer.alloc(3 * 1024 * 1024, 'a').toString('base64');
    const refused = await raw.request('tools/call', {
      name: 'send_notification',
      arguments: {
        via: 'email',
        to: 'ops@example.com',
        subject: 's',
        body_html: 'x',
        attachments: [{ filename: 'a.txt', content_base64: over }],
      },
    });
    expect(refused.error.message).toMatch(
      /over the limit of \d+ bytes \(1 MiB plus what NOTIFY_EMAIL_MAX_ATTACHMENT_BYTES lets a call carry/,
    );
    const init = await raw.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    expect(init.result.serverInfo).toBeDefined();
  });
});
