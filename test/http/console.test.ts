/**
 * The operator console over real HTTP, in process on port 0, with a real SMTP peer
 * (smtp-server) behind nodemailer: who may enter (operator tokens only; 401 and 403 said
 * apart), the session cookie's attributes, CSRF and cross-origin refusals, the CSP, escaping
 * and the sandboxed message frame, and a held send (NOTIFY_APPROVAL_MODE=console) that an
 * agent's MCP client makes in either protocol era, approved once (the SMTP peer gets it
 * exactly once) or declined (it gets nothing), each decision bound to the payload hash shown.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/core/log.js';
import { serveHttp, type HttpHandle } from '../../src/transports/http/listener.js';
import { raw, type Sent } from '../helpers/http.js';
import { delivery } from '../store/suite.js';
import { ERAS, eraClient, type Era } from '../helpers/mcp-cli.js';
import { SMTP_PASS, SMTP_USER, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';

const OPS = 'ops-token-0123456789abcdef';
const BOT = 'bot-token-0123456789abcdef';
const OTHER = 'other-token-0123456789abcd';

const header = (s: Sent, name: string) => {
  const v = s.headers[name];
  return Array.isArray(v) ? v.join('\n') : (v ?? '');
};

describe('operator console (/console)', () => {
  let app: App;
  let http: HttpHandle;
  let smtp: TestSmtpServer;
  const clients: Client[] = [];
  let config: ReturnType<typeof loadConfig>;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    const dir = mkdtempSync(join(tmpdir(), 'notify-console-'));
    config = loadConfig({
      NOTIFY_DATA_DIR: dir,
      HOME: dir,
      NOTIFY_HTTP_TOKENS: `ops:${OPS},bot:${BOT},other:${OTHER}`,
      NOTIFY_OPERATOR_CLIENTS: 'ops',
      NOTIFY_APPROVAL: 'all',
      NOTIFY_APPROVAL_MODE: 'console',
      SMTP_URL: `smtp://${SMTP_USER}:${SMTP_PASS}@127.0.0.1:${smtp.port}`,
      EMAIL_FROM: 'Ops <ops@example.com>',
      NOTIFY_EMAIL_ALLOW: 'example.com',
    });
    app = await createApp(
      config,
      createLogger('error', () => {}),
    );
    http = await serveHttp(app, { port: 0 });
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await http?.close();
    await app?.close();
    await smtp?.close();
  });

  async function agent(era: Era, token = BOT): Promise<Client> {
    const client = eraClient('agent', era);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    clients.push(client);
    return client;
  }

  async function heldSend(era: Era, subject: string, bodyHtml = '<p>Hello</p>'): Promise<string> {
    const client = await agent(era);
    const result = await client.callTool({
      name: 'send_notification',
      arguments: { via: 'email', to: ['jane@example.com', 'audit@example.com'], subject, body_html: bodyHtml },
    });
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    const held = result.structuredContent as { id: string; status: string };
    expect(held.status).toBe('pending_approval');
    return held.id;
  }

  /** Signs in through the form as a browser would: GET the form (its login cookie and field), POST the token. */
  async function signIn(token = OPS): Promise<{ cookie: string; res: Sent }> {
    const form = await raw(`${http.url}/console/login`);
    const loginCookie = header(form, 'set-cookie').split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)![1]!;
    const res = await raw(`${http.url}/console/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: loginCookie, Origin: http.url },
      body: new URLSearchParams({ token, csrf, next: '/console/approvals' }).toString(),
    });
    const session = header(res, 'set-cookie')
      .split('\n')
      .find((c) => c.startsWith('notify_console='));
    return { cookie: session ? session.split(';')[0]! : '', res };
  }

  const page = (path: string, cookie: string) => raw(`${http.url}${path}`, { headers: { Cookie: cookie } });
  const csrfOf = (body: string) => /name="csrf" value="([^"]+)"/.exec(body)![1]!;
  const shaOf = (body: string, id: string) =>
    new RegExp(`action="/console/approvals/${id}"[\\s\\S]*?name="payload_sha256" value="([0-9a-f]{64})"`).exec(body)![1]!;
  const post = (path: string, cookie: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    raw(`${http.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie, Origin: http.url, ...headers },
      body: new URLSearchParams(form).toString(),
    });

  it('lets operators in only: no credential is sent to sign in, a wrong token is 401, a non-operator token 403 on every page', async () => {
    const anonymous = await raw(`${http.url}/console/approvals`);
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.location).toBe('/console/login?next=%2Fconsole%2Fapprovals');
    const id = await heldSend('modern', 'For ops only');
    for (const path of [
      '/console',
      '/console/approvals',
      `/console/notifications/${id}`,
      `/console/notifications/${id}/raw`,
      '/console/banners',
    ]) {
      expect((await raw(`${http.url}${path}`, { headers: { Authorization: `Bearer ${BOT}` } })).status, path).toBe(403);
      expect((await raw(`${http.url}${path}`, { headers: { Authorization: `Bearer ${BOT}x` } })).status, path).toBe(401);
      const asOps = await raw(`${http.url}${path}`, { headers: { Authorization: `Bearer ${OPS}` } });
      expect(asOps.status, path).toBe(200);
    }
    // The agent's notification is not shown to another client, not even its id's page.
    const theirs = await raw(`${http.url}/console/notifications/${id}`, { headers: { Authorization: `Bearer ${OTHER}` } });
    expect(theirs.status).toBe(403);
    expect(theirs.body).not.toContain('For ops only');
    // Signing in with a non-operator token opens no session.
    const refused = await signIn(BOT);
    expect(refused.res.status).toBe(403);
    expect(refused.cookie).toBe('');
    expect(refused.res.body).toContain('is not an operator');
    expect((await signIn('not-a-token-at-all-000')).res.status).toBe(401);
  });

  it('opens an HttpOnly, SameSite=Strict session, and sends every page under a CSP with no script source', async () => {
    const { cookie, res } = await signIn();
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/console/approvals');
    const set = header(res, 'set-cookie');
    expect(set).toMatch(/notify_console=[^;]+; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=\d+/);
    const approvals = await page('/console/approvals', cookie);
    expect(approvals.status).toBe(200);
    const csp = header(approvals, 'content-security-policy');
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/script-src|unsafe-inline|https?:/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(approvals.body).not.toMatch(/<script|style="/i);
    // A session forged or altered is no session.
    expect((await page('/console/approvals', `${cookie}x`)).status).toBe(303);
  });

  it('ends the session at sign-out on every replica sharing the store: a copied cookie neither opens a page nor decides', async () => {
    const replicaApp = await createApp(
      config,
      createLogger('error', () => {}),
    );
    const replica = await serveHttp(replicaApp, { port: 0 });
    try {
      const id = await heldSend('modern', 'Signed out before deciding');
      const { cookie } = await signIn();
      const other = await signIn();
      const list = await page('/console/approvals', cookie);
      const csrf = csrfOf(list.body);
      const sha = shaOf(list.body, id);
      expect((await raw(`${replica.url}/console/approvals`, { headers: { Cookie: cookie } })).status).toBe(200);
      const out = await post('/console/logout', cookie, { csrf });
      expect(out.status).toBe(303);
      expect(header(out, 'set-cookie')).toMatch(/notify_console=; .*Max-Age=0/);
      // The copy, here and on the other replica: signed out.
      for (const base of [http.url, replica.url]) {
        const again = await raw(`${base}/console/approvals`, { headers: { Cookie: cookie } });
        expect(again.status, base).toBe(303);
        expect(again.headers.location).toMatch(/^\/console\/login/);
        const decide = await raw(`${base}/console/approvals/${id}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie, Origin: base },
          body: new URLSearchParams({ decision: 'decline', payload_sha256: sha, csrf }).toString(),
        });
        expect(decide.status, base).toBe(401);
      }
      expect((await app.store.getDelivery(id))!.status).toBe('pending_approval');
      // Another sign-in of the same operator (another device) goes on.
      expect((await page('/console/approvals', other.cookie)).status).toBe(200);
    } finally {
      await replica.close();
      await replicaApp.close();
    }
  });

  it('shows as a notice only what the server said: ?done= and ?error= of a link are not shown', async () => {
    const { cookie } = await signIn();
    for (const path of ['/console/approvals', '/console/waiting', '/console/banners']) {
      for (const param of ['done', 'error']) {
        const forged = await page(
          `${path}?${param}=${encodeURIComponent('Your session expired: sign in at https://evil.example/console')}&sig=${'A'.repeat(43)}`,
          cookie,
        );
        expect(forged.status, path).toBe(200);
        expect(forged.body, `${path} ${param}`).not.toContain('evil.example');
        expect(forged.body).not.toMatch(/role="(status|alert)"/);
      }
    }
    // The server's own notice, through its redirect, is shown.
    const form = await page('/console/banners', cookie);
    const shown = await post('/console/banners', cookie, { csrf: csrfOf(form.body), text: 'notice check', audience: 'all' });
    const next = await page(shown.headers.location as string, cookie);
    expect(next.body).toMatch(/role="status"[^>]*>[^<]*Showing banner /);
    // Its text altered, or shown to another operator's session: not shown.
    const altered = (shown.headers.location as string).replace('Showing', 'Hiding');
    expect((await page(altered, cookie)).body).not.toContain('Hiding banner');
  });

  it.each(ERAS)('holds an agent send (%s client); an approval sends it exactly once, bound to the payload shown', async (era) => {
    const before = smtp.received.length;
    const id = await heldSend(era, `Quarterly numbers ${era}`);
    expect(smtp.received.length).toBe(before);
    // The agent sees it wait.
    const bot = await agent(era);
    const status = await bot.callTool({ name: 'get_notification', arguments: { id } });
    expect((status.structuredContent as { status: string }).status).toBe('pending_approval');

    const { cookie } = await signIn();
    const list = await page('/console/approvals', cookie);
    expect(list.body).toContain(`Quarterly numbers ${era}`);
    // Every recipient of the envelope is shown to the person deciding (bcc too, once the branch takes it).
    expect(list.body).toContain('jane@example.com, audit@example.com');
    expect(list.body).toMatch(/<button type="submit" name="decision" value="approve">Approve<\/button>/);
    expect(list.body).toMatch(/<button type="submit" name="decision" value="decline" class="danger">Decline<\/button>/);
    const csrf = csrfOf(list.body);
    const sha = shaOf(list.body, id);

    // Without the form's token, from another origin, or with another hash: nothing happens.
    expect((await post(`/console/approvals/${id}`, cookie, { decision: 'approve', payload_sha256: sha })).status).toBe(403);
    expect((await post(`/console/approvals/${id}`, cookie, { decision: 'approve', payload_sha256: sha, csrf: 'forged' })).status).toBe(403);
    expect(
      (
        await post(
          `/console/approvals/${id}`,
          cookie,
          { decision: 'approve', payload_sha256: sha, csrf },
          { Origin: 'https://evil.example' },
        )
      ).status,
    ).toBe(403);
    expect((await post(`/console/approvals/${id}`, '', { decision: 'approve', payload_sha256: sha, csrf })).status).toBe(401);
    const wrongHash = await post(`/console/approvals/${id}`, cookie, { decision: 'approve', payload_sha256: 'f'.repeat(64), csrf });
    expect(wrongHash.status).toBe(409);
    expect(smtp.received.length).toBe(before);

    const approved = await post(`/console/approvals/${id}`, cookie, {
      decision: 'approve',
      payload_sha256: sha,
      csrf,
      reason: 'numbers checked',
    });
    expect(approved.status).toBe(303);
    expect(decodeURIComponent(approved.headers.location as string)).toContain(`Approved ${id}: it left (sent).`);
    expect(smtp.received.length).toBe(before + 1);
    const mail = smtp.received.at(-1)!;
    expect(mail.to.sort()).toEqual(['audit@example.com', 'jane@example.com']);
    expect(mail.raw).toContain(`Quarterly numbers ${era}`);

    // Again, or a decline after it: refused, nothing more sent.
    expect((await post(`/console/approvals/${id}`, cookie, { decision: 'approve', payload_sha256: sha, csrf })).status).toBe(409);
    expect((await post(`/console/approvals/${id}`, cookie, { decision: 'decline', payload_sha256: sha, csrf })).status).toBe(409);
    expect(smtp.received.length).toBe(before + 1);

    const record = (await app.store.getDelivery(id))!;
    expect(record).toMatchObject({ status: 'sent', attempts: 1, client: 'bot' });
    expect(record.approval).toMatchObject({
      outcome: 'approved',
      decided_by: 'ops',
      reason: 'numbers checked',
      payload_sha256: sha,
      reasons: ['all'],
    });
    expect(typeof record.approval!.decided_at).toBe('number');
    // The decision and the send it released are on the audit chain, and the notification's page lists them.
    const audited = await app.store.auditFor(id);
    expect(audited.map((e) => [e.kind, e.client])).toEqual([
      ['approval.pending', 'bot'],
      ['outcome.pending_approval', 'bot'],
      ['decision.approved', 'ops'],
      // The approval put it in the outbox, due now; the release claimed it, sent it, and ended.
      ['outbox.scheduled', 'bot'],
      ['outbox.releasing', 'bot'],
      ['request', 'bot'],
      ['outcome.sent', 'bot'],
      ['outbox.released', 'bot'],
    ]);
    const shown = await page(`/console/notifications/${id}`, cookie);
    expect(shown.body).toContain('<h2 id="audit">Audit entries</h2>');
    for (const e of audited) expect(shown.body).toContain(`<td data-label="Seq">${e.seq}</td>`);
    expect(shown.body).toContain(`<td data-label="Kind">decision.approved</td><td data-label="Client">ops</td>`);
    const after = await bot.callTool({ name: 'get_notification', arguments: { id } });
    expect(after.structuredContent).toMatchObject({ status: 'sent', decided_by: 'ops', reason: 'numbers checked' });
  });

  it('a decline sends nothing and records who, when and why', async () => {
    const before = smtp.received.length;
    const id = await heldSend('legacy', 'Do not send this');
    const { cookie } = await signIn();
    const list = await page('/console/approvals', cookie);
    const declined = await post(`/console/approvals/${id}`, cookie, {
      decision: 'decline',
      payload_sha256: shaOf(list.body, id),
      csrf: csrfOf(list.body),
      reason: 'wrong list',
    });
    expect(declined.status).toBe(303);
    expect(smtp.received.length).toBe(before);
    expect((await app.store.getDelivery(id))!).toMatchObject({
      status: 'declined',
      approval: { outcome: 'declined', decided_by: 'ops', reason: 'wrong list' },
    });
    // The agent reads the same: who declined, when and why.
    const seen = (await (await agent('modern')).callTool({ name: 'get_notification', arguments: { id } })).structuredContent as Record<
      string,
      unknown
    >;
    expect(seen).toMatchObject({ status: 'declined', decided_by: 'ops', reason: 'wrong list' });
    expect(Date.parse(seen.decided_at as string)).toBe((await app.store.getDelivery(id))!.approval!.decided_at);
    expect((await page('/console/approvals', cookie)).body).not.toContain('Do not send this');
  });

  it('shows a message whose HTML carries script only as text or inside a sandboxed, script-less frame', async () => {
    const id = await heldSend(
      'modern',
      '<script>alert("subject")</script>',
      '<p>Hi</p><script>window.pwned=1</script><img src="https://tracker.example/p.gif">',
    );
    const { cookie } = await signIn();
    const detail = await page(`/console/notifications/${id}`, cookie);
    expect(detail.status).toBe(200);
    expect(detail.body).not.toContain('<script>');
    expect(detail.body).toContain('&lt;script&gt;');
    expect(detail.body).toMatch(new RegExp(`<iframe class="mail" [^>]*sandbox="" [^>]*src="/console/notifications/${id}/html"`));
    expect(detail.body).toContain('audit@example.com');
    const frame = await page(`/console/notifications/${id}/html`, cookie);
    expect(frame.status).toBe(200);
    expect(header(frame, 'content-security-policy')).toMatch(/^sandbox; default-src 'none';/);
    expect(header(frame, 'content-security-policy')).not.toMatch(/script-src|https?:/);
    const rawMime = await page(`/console/notifications/${id}/raw`, cookie);
    expect(rawMime.headers['content-type']).toBe('message/rfc822');
    expect(rawMime.headers['content-disposition']).toBe(`attachment; filename="${id}.eml"`);
    expect(rawMime.body).toMatch(/^Subject: /m);
  });

  it('shows and dismisses banners through the banner tools, escaping what they say', async () => {
    const { cookie } = await signIn();
    const form = await page('/console/banners', cookie);
    const csrf = csrfOf(form.body);
    const shown = await post('/console/banners', cookie, {
      csrf,
      text: '<img src=x onerror=alert(1)> maintenance',
      audience: 'all',
      severity: 'warning',
    });
    expect(shown.status).toBe(303);
    const after = await page('/console/banners', cookie);
    expect(after.body).toContain('&lt;img src=x onerror=alert(1)&gt; maintenance');
    expect(after.body).not.toContain('<img src=x');
    const [banner] = await app.store.listBanners({ status: 'active', now: Date.now() });
    expect(banner).toMatchObject({ severity: 'warning', audience: 'all' });
    // The tool's own validation answers a bad one, as it would an agent.
    const bad = await post('/console/banners', cookie, { csrf, text: 'x', audience: 'NOT VALID' });
    expect(decodeURIComponent(bad.headers.location as string)).toContain('error=INVALID_FIELD');
    expect((await post(`/console/banners/${banner!.id}/dismiss`, cookie, { csrf })).status).toBe(303);
    expect((await app.store.getBanner(banner!.id))!.dismissed_at).not.toBeNull();
    // A dismiss without the form's token changes nothing.
    const second = await post('/console/banners', cookie, { csrf, text: 'second', audience: 'all' });
    expect(second.status).toBe(303);
    const [other] = await app.store.listBanners({ status: 'active', now: Date.now() });
    expect((await post(`/console/banners/${other!.id}/dismiss`, cookie, {})).status).toBe(403);
    expect((await app.store.getBanner(other!.id))!.dismissed_at).toBeNull();
  });

  it('filters the list by status, channel, client and time', async () => {
    const { cookie } = await signIn();
    const declined = await page('/console?status=declined', cookie);
    expect(declined.body).toContain('declined');
    expect(declined.body).not.toMatch(/class="status sent"/);
    const none = await page('/console?client=nobody', cookie);
    expect(none.body).toContain('No notifications match.');
    const future = await page('/console?since=2099-01-01T00:00', cookie);
    expect(future.body).toContain('No notifications match.');
    const bogus = await page('/console?status=%3Cscript%3E', cookie);
    expect(bogus.body).toContain('Not filtered by status');
    expect(bogus.body).not.toContain('<script>');
  });

  it('pages past the newest 100 with an Older link that keeps the filters, each notification once', async () => {
    const { cookie } = await signIn();
    const at = Date.now() - 60_000;
    // 130 of one client, 30 of them in one millisecond: the page boundary falls inside the tie.
    const written: string[] = [];
    for (let i = 0; i < 130; i++) {
      const id = `ntf_page${String(i).padStart(3, '0')}`;
      await app.store.writeRecord(delivery(id, i < 30 ? at : at + i, { client: 'pager' }));
      written.push(id);
    }
    const ids = (body: string) => [...body.matchAll(/href="\/console\/notifications\/(ntf_page\d+)"/g)].map((m) => m[1]!);
    const first = await page('/console?client=pager', cookie);
    expect(ids(first.body)).toHaveLength(100);
    expect(first.body).toContain('The newest 100');
    const link = /<a class="button secondary" href="([^"]+)">Older notifications<\/a>/.exec(first.body)?.[1]?.replaceAll('&amp;', '&');
    expect(link).toMatch(/^\/console\?client=pager&after=ntf_page\d+$/);
    const second = await page(link!, cookie);
    expect(ids(second.body)).toHaveLength(30);
    expect(second.body).toContain('30 notifications older than the page before');
    expect(second.body).not.toContain('Older notifications');
    expect([...ids(first.body), ...ids(second.body)].sort()).toEqual(written.sort());
    expect((await page('/console?after=%3Cx%3E', cookie)).body).toContain('Not filtered by page');
  });
});
