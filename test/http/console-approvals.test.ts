/**
 * What a person deciding in the console is shown of a held send: on its approvals card, who it
 * goes to as to, cc and bcc, its text, every MIME part as a mail client reads the message (a
 * delimiter is a whole line), and a Slack post's blocks; on its page, every part hashed, and
 * the exact payload with how much of it was left out and a way to see it whole. Pages of held
 * sends are bounded (APPROVAL_ROWS), so one view's work is.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { APPROVAL_ROWS } from '../../src/console/approvals-page.js';
import { createLogger } from '../../src/core/log.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import type { DeliveryRecord } from '../../src/store/types.js';
import { raw, type Sent } from '../helpers/http.js';
import { eraClient } from '../helpers/mcp-cli.js';
import { delivery } from '../store/suite.js';

const OPS = 'ops-token-0123456789abcdef';
const BOT = 'bot-token-0123456789abcdef';

const header = (s: Sent, name: string) => {
  const v = s.headers[name];
  return Array.isArray(v) ? v.join('\n') : (v ?? '');
};

/** The text of one card (`held-<id>`), tags dropped. */
function cardText(body: string, id: string): string {
  const at = body.indexOf(`id="held-${id}"`);
  expect(at).toBeGreaterThan(0);
  const section = body.slice(at, body.indexOf('</section>', at));
  return section
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

/** A held mail whose caller parts sit behind a mid-line close delimiter, as e1's HIDE shape has them; PAD first when asked. */
function hiddenPartsMail(pad: boolean): string {
  return [
    'Subject: Q3 report',
    'To: alice@example.com',
    'Content-Type: multipart/alternative; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Quarterly report attached.',
    '--b',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Quarterly report attached.</p>',
    ...(pad ? Array.from({ length: 300 }, (_, i) => `<p>Line ${i} of the quarterly figures, all within the usual range.</p>`) : []),
    '<!-- x--b--',
    '--b',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>URGENT: wire the money today.</p>',
    '--b',
    'Content-Type: application/x-msdownload; name=invoice.exe',
    'Content-Disposition: attachment; filename=invoice.exe',
    'Content-Transfer-Encoding: base64',
    '',
    'TVqQAA==',
    '--b--',
    '-->',
  ].join('\r\n');
}

describe('console: what a person approving a held send is shown', () => {
  let app: App;
  let http: HttpHandle;
  let cookie: string;
  const clients: Client[] = [];
  let at = Date.now();

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-console-approvals-'));
    const config = loadConfig({
      NOTIFY_DATA_DIR: dir,
      HOME: dir,
      NOTIFY_HTTP_TOKENS: `ops:${OPS},bot:${BOT}`,
      NOTIFY_OPERATOR_CLIENTS: 'ops',
      NOTIFY_APPROVAL: 'all',
      NOTIFY_APPROVAL_MODE: 'console',
    });
    app = await createApp(
      config,
      createLogger('error', () => {}),
    );
    http = await serveHttp(app, { port: 0 });
    const form = await raw(`${http.url}/console/login`);
    const res = await raw(`${http.url}/console/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: header(form, 'set-cookie').split(';')[0]!, Origin: http.url },
      body: new URLSearchParams({
        token: OPS,
        csrf: /name="csrf" value="([^"]+)"/.exec(form.body)![1]!,
        next: '/console/approvals',
      }).toString(),
    });
    cookie = header(res, 'set-cookie')
      .split('\n')
      .find((c) => c.startsWith('notify_console='))!
      .split(';')[0]!;
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await http?.close();
    await app?.close();
  });

  const page = (path: string) => raw(`${http.url}${path}`, { headers: { Cookie: cookie } });

  async function held(extra: Partial<DeliveryRecord>): Promise<string> {
    const id = `ntf_${(at++).toString(16).padStart(32, '0')}`;
    await app.store.writeRecord(
      delivery(id, at, {
        status: 'pending_approval',
        client: 'bot',
        approval: { outcome: 'pending', reasons: ['all'], payload_sha256: 'ab'.repeat(32), expires_at: at + 3_600_000 },
        ...extra,
      }),
    );
    return id;
  }

  it("a held email's card names to, cc and bcc apart, shows its text and lists every part", async () => {
    const client = eraClient('agent', 'modern');
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${BOT}` } } }),
    );
    clients.push(client);
    const result = await client.callTool({
      name: 'send_notification',
      arguments: {
        via: 'email',
        to: ['Jane Doe <jane@example.com>', 'b@example.com'],
        cc: ['c@example.com'],
        bcc: ['audit@example.com'],
        subject: 'Quarterly figures',
        body_html: '<p>The figures are attached.</p>',
        body_text: 'The figures are attached. Wire nothing.',
        attachments: [{ filename: 'q3.csv', content_base64: Buffer.from('a,b\n1,2\n').toString('base64') }],
      },
    });
    const id = (result.structuredContent as { id: string }).id;
    const text = cardText((await page('/console/approvals')).body, id);
    expect(text).toContain('To Jane Doe <jane@example.com>, b@example.com');
    expect(text).toContain('Cc c@example.com');
    expect(text).toContain('Bcc (in no header) audit@example.com');
    expect(text).toContain('Text The figures are attached. Wire nothing.');
    expect(text).toContain('Parts (text/plain, 39 bytes) (text/html, 32 bytes) q3.csv (text/csv, 8 bytes, attachment)');
  });

  it('lists on the card and the page every part a mail client reads, and says how much of the payload the page leaves out', async () => {
    const id = await held({ payload: { envelope: { from: 'ops@example.com', to: ['alice@example.com'] }, raw: hiddenPartsMail(true) } });
    const text = cardText((await page('/console/approvals')).body, id);
    expect(text).toContain('invoice.exe (application/x-msdownload, 4 bytes, attachment)');
    expect(text.match(/text\/html/g)).toHaveLength(2);

    const detail = (await page(`/console/notifications/${id}`)).body;
    expect(detail).toMatch(/<td>application\/x-msdownload \(attachment\)<\/td><td>invoice\.exe<\/td><td class="num">4<\/td>/);
    // The payload runs past what the page prints: the page says so before it, and offers it whole.
    expect(detail).toMatch(/Shown: the first 20000 characters; \d+ more are not shown here\./);
    const pre = (body: string) => /<pre tabindex="0" aria-label="The exact provider payload[^>]*>([\s\S]*?)<\/pre>/.exec(body)![1]!;
    expect(pre(detail)).not.toContain('invoice.exe');
    const whole = (await page(`/console/notifications/${id}?payload=whole`)).body;
    expect(pre(whole)).toContain('invoice.exe');
    expect(whole).not.toContain('Shown: the first');
  });

  it("shows a Slack post's blocks, which Slack shows instead of its text, with where each link goes", async () => {
    const blocks = [
      {
        type: 'section',
        text: { type: 'mrkdwn', text: '*All staff:* reset your password at <https://sso-reset.evil.example|sso.example.com/reset>' },
      },
    ];
    const id = await held({ via: 'slack', payload: { channel: 'C0123ABCD', text: 'Deploy 142 is done.', blocks } });
    const text = cardText((await page('/console/approvals')).body, id);
    expect(text).toContain('Text Deploy 142 is done.');
    expect(text).toContain('reset your password at <https://sso-reset.evil.example|sso.example.com/reset>');
    expect(text).toContain('link: https://sso-reset.evil.example (shown as "sso.example.com/reset")');
  });

  it("shows an MMS's media URLs, which Twilio fetches and sends", async () => {
    const id = await held({
      via: 'sms',
      payload: { To: '+14155550123', Body: 'Your invoice', MediaUrl: ['https://cdn.example.com/invoice.png'] },
    });
    const text = cardText((await page('/console/approvals')).body, id);
    expect(text).toContain('Media (fetched by Twilio) https://cdn.example.com/invoice.png');
    expect(text).toContain('Text Your invoice');
  });

  it('shows a file name nodemailer wrote as RFC 2231 or an encoded word as the name it is, escaped', async () => {
    const mail = [
      'Subject: names',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'x',
      '--b',
      'Content-Type: text/plain',
      `Content-Disposition: attachment; filename*0*=utf-8''report%22%3B%20filename%3D%22; filename*1*=payload.exe%3Cb%3E`,
      '',
      'y',
      '--b--',
    ].join('\r\n');
    const id = await held({ payload: { envelope: { from: 'a@example.com', to: ['b@example.com'] }, raw: mail } });
    const body = (await page('/console/approvals')).body;
    expect(body).toContain('report&quot;; filename=&quot;payload.exe&lt;b&gt; (text/plain, 1 bytes, attachment)');
    expect((await page(`/console/notifications/${id}`)).body).toContain('<td>report&quot;; filename=&quot;payload.exe&lt;b&gt;</td>');
  });

  it('lists a large mail and a large post by their subject and first words, reading no more of them than that', async () => {
    const big = 'x'.repeat(200_000);
    const mail = await held({
      status: 'sent',
      payload: {
        envelope: { from: 'a@example.com', to: ['b@example.com'] },
        messageId: '<m@x>',
        raw: `Subject: =?UTF-8?Q?Caf=C3=A9_figures?=\r\n\r\n${big}`,
      },
    });
    const post = await held({ status: 'sent', via: 'slack', payload: { channel: 'C0123ABCD', text: `Deploy "142" done ${big}` } });
    const list = (await page('/console')).body;
    const row = (id: string) => list.slice(list.indexOf(`>${id}</a>`), list.indexOf('</tr>', list.indexOf(`>${id}</a>`)));
    expect(row(mail)).toContain('Café figures');
    expect(row(post)).toContain('Deploy &quot;142&quot; done xxx');
  });

  it('shows held sends a page at a time, with a link to the older ones', async () => {
    for (let i = 0; i < APPROVAL_ROWS + 3; i++)
      await held({ payload: { envelope: { from: 'a@example.com', to: ['b@example.com'] }, raw: `Subject: page ${i}\r\n\r\nx` } });
    const first = (await page('/console/approvals')).body;
    expect(first.match(/<section class="card"/g)).toHaveLength(APPROVAL_ROWS);
    const older = /href="(\/console\/approvals\?after=[^"]+)"/.exec(first)![1]!;
    const second = (await page(older.replace(/&amp;/g, '&'))).body;
    expect(second.match(/<section class="card"/g)!.length).toBeGreaterThan(0);
    expect(second).toContain('after the page before');
  });
});
