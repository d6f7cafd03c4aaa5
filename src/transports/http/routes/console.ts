/**
 * /console: the operator console (src/console/ renders it). Only operators enter: a token
 * of NOTIFY_HTTP_TOKENS whose client is in NOTIFY_OPERATOR_CLIENTS, presented once at
 * /console/login (then an HttpOnly, SameSite=Strict session cookie) or on every request as
 * `Authorization: Bearer`. Every form POST of a cookie session carries a CSRF token bound to
 * that session, and a cross-origin Origin is refused outright. Every page is sent under a
 * CSP that allows no script at all, and a message's HTML only inside a sandboxed frame.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConsoleActions } from '../../../console/actions.js';
import { approvalsBody } from '../../../console/approvals-page.js';
import { bannersBody } from '../../../console/banners-page.js';
import { html } from '../../../console/html.js';
import { page, type Section } from '../../../console/layout.js';
import { loginBody } from '../../../console/login-page.js';
import { htmlBody, parseMime, rawMessage } from '../../../console/mime.js';
import { detailBody, listBody, toQuery, type ListFilters } from '../../../console/notifications-page.js';
import type { Session, Sessions } from '../../../console/session.js';
import { CONSOLE_CSS } from '../../../console/style.js';
import { waitingDetailBody } from '../../../console/waiting-detail.js';
import { waitingBody } from '../../../console/waiting-page.js';
import type { HttpToken } from '../../../config/config.js';
import { NotifyError } from '../../../core/errors.js';
import type { Logger } from '../../../core/log.js';
import { BodyTooLargeError, readBody } from '../../body.js';
import { createAuthenticator } from '../auth.js';
import type { Route } from './route.js';

const SESSION_COOKIE = 'notify_console';
const LOGIN_COOKIE = 'notify_console_login';
/** Forms are small: a reason, a banner's text. */
const MAX_FORM_BYTES = 64 * 1024;

/** No script from anywhere, styles and frames from this origin only, forms posted only here, never framed. */
const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** A message's own HTML: a sandbox (no script, an opaque origin), its inline styles, no remote load of any kind. */
const MAIL_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'; base-uri 'none'; form-action 'none'";

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  // same-origin, not no-referrer: under no-referrer Chromium sends `Origin: null` with a form POST, which the Origin check must refuse.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

export interface ConsoleDeps {
  actions: ConsoleActions;
  sessions: Sessions;
  tokens: readonly HttpToken[];
  operators: readonly string[];
  now: () => number;
  log: Logger;
}

function cookies(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

function cookie(name: string, value: string, maxAgeS: number, req: IncomingMessage): string {
  // Secure when the request reached us over TLS (a proxy says so); on plain loopback HTTP a Secure cookie would never come back.
  const secure = req.headers['x-forwarded-proto'] === 'https' ? '; Secure' : '';
  return `${name}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure}`;
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string | string[]> = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': PAGE_CSP, 'X-Frame-Options': 'DENY', ...SECURITY_HEADERS, ...headers });
  res.end(body);
}

const redirect = (res: ServerResponse, to: string, headers: Record<string, string | string[]> = {}) => send(res, 303, '', { Location: to, ...headers });

/** A path inside the console to return to after signing in; anything else is the console's start. */
function safeNext(next: string | null | undefined): string {
  return next && /^\/console(\/[A-Za-z0-9_\-./?=&%]*)?$/.test(next) && !next.includes('//') ? next : '/console';
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The Origin of a browser's POST must be this server (as the Host names it); a POST without one (a script) passes. */
function crossOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    return true;
  }
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new NotifyError('INVALID_FIELD', 'Send the form as application/x-www-form-urlencoded.');
  return new URLSearchParams((await readBody(req, MAX_FORM_BYTES)).toString('utf8'));
}

/** Who is asking: the signed-in operator, or why not (401: no valid credential; 403: a valid one that is not an operator's). */
type Who = { kind: 'operator'; client: string; session?: Session } | { kind: 'anonymous' } | { kind: 'refused'; status: 401 | 403; message: string };

export function consoleRoute(deps: ConsoleDeps): Route {
  const auth = createAuthenticator(deps.tokens);
  const isOperator = (client: string) => deps.operators.includes(client);

  const who = async (req: IncomingMessage): Promise<Who> => {
    if (req.headers.authorization !== undefined) {
      const r = auth.check(req.headers.authorization);
      if (!r.ok) return { kind: 'refused', status: 401, message: 'The bearer token is not one of NOTIFY_HTTP_TOKENS.' };
      if (!isOperator(r.token.client)) return { kind: 'refused', status: 403, message: `Client ${r.token.client} is not an operator (NOTIFY_OPERATOR_CLIENTS): the console is for operators only.` };
      return { kind: 'operator', client: r.token.client };
    }
    const session = await deps.sessions.check(cookies(req).get(SESSION_COOKIE), deps.now());
    return session ? { kind: 'operator', client: session.client, session } : { kind: 'anonymous' };
  };

  const errorPage = (res: ServerResponse, status: number, message: string, section: Section = 'login') =>
    send(res, status, page({ title: status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : 'Cannot do that', section, notice: { kind: 'error', text: message }, body: html`<p><a href="/console">Back to the console</a></p>` }));

  const loginPage = (res: ServerResponse, req: IncomingMessage, next: string, status = 200, notice?: string) => {
    const token = randomBytes(24).toString('base64url');
    send(
      res,
      status,
      page({ title: 'Sign in', section: 'login', ...(notice ? { notice: { kind: 'error' as const, text: notice } } : {}), body: loginBody(token, next) }),
      { 'Set-Cookie': cookie(LOGIN_COOKIE, token, 600, req) },
    );
  };

  async function login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await readForm(req);
    const next = safeNext(form.get('next'));
    // Login CSRF: the form's token must be the one this browser was given with the form.
    const given = cookies(req).get(LOGIN_COOKIE);
    if (crossOrigin(req) || !given || !sameText(given, form.get('csrf') ?? '')) return loginPage(res, req, next, 403, 'The sign-in form expired or came from another site; sign in again.');
    const r = auth.check(`Bearer ${form.get('token') ?? ''}`);
    if (!r.ok) return loginPage(res, req, next, 401, 'That token is not one of this server’s tokens.');
    if (!isOperator(r.token.client)) return loginPage(res, req, next, 403, `Client ${r.token.client} is not an operator (NOTIFY_OPERATOR_CLIENTS): the console is for operators only.`);
    const session = deps.sessions.open(r.token.client, deps.now());
    deps.log.info('console sign-in', { client: r.token.client });
    redirect(res, next, { 'Set-Cookie': [cookie(SESSION_COOKIE, session.value, Math.floor((session.expiresAt - deps.now()) / 1000), req), cookie(LOGIN_COOKIE, '', 0, req)] });
  }

  return (req, res, url) => {
    const path = url.pathname;
    if (path !== '/console' && !path.startsWith('/console/')) return undefined;
    return {
      name: 'console',
      async serve() {
        const method = req.method ?? 'GET';
        const get = method === 'GET' || method === 'HEAD';
        if (!get && method !== 'POST') return errorPage(res, 405, `${method} is not a console method.`);
        if (path === '/console/console.css') {
          res.writeHead(200, { 'Content-Type': 'text/css; charset=utf-8', ...SECURITY_HEADERS, 'Cache-Control': 'public, max-age=300' });
          return void res.end(CONSOLE_CSS);
        }
        try {
          if (path === '/console/login') return get ? loginPage(res, req, safeNext(url.searchParams.get('next'))) : await login(req, res);
          const caller = await who(req);
          if (caller.kind === 'refused') return errorPage(res, caller.status, caller.message);
          if (caller.kind === 'anonymous') {
            if (get) return redirect(res, `/console/login?next=${encodeURIComponent(safeNext(path + url.search))}`);
            return errorPage(res, 401, 'Sign in first.');
          }
          let form: URLSearchParams | undefined;
          if (!get) {
            if (crossOrigin(req)) return errorPage(res, 403, 'A form from another site cannot act here.');
            form = await readForm(req);
            // A bearer request carries its credential itself, so no other site can make one; a cookie needs the form's token.
            if (caller.session && !deps.sessions.csrfValid(caller.session, form.get('csrf') ?? undefined)) {
              return errorPage(res, 403, 'This form expired or came from another site; reload the page and try again.');
            }
          }
          return await dispatch(req, res, url, caller.client, caller.session, form);
        } catch (err) {
          if (err instanceof BodyTooLargeError) return errorPage(res, 413, `The form is over ${MAX_FORM_BYTES} bytes.`);
          if (err instanceof NotifyError) return errorPage(res, err.code === 'NOT_FOUND' ? 404 : 409, err.message);
          throw err;
        }
      },
    };
  };

  async function dispatch(req: IncomingMessage, res: ServerResponse, url: URL, client: string, session: Session | undefined, form: URLSearchParams | undefined): Promise<void> {
    const path = url.pathname;
    const csrf = session ? deps.sessions.csrf(session) : '';
    const bannerAccess = deps.actions.bannerAccess(client);
    const shell = { session: { client, csrf, withheld: bannerAccess.see ? [] : (['banners'] as const) } };
    const notice = (text: string | null, kind: 'info' | 'error' = 'info') => (text ? { notice: { kind, text: text.slice(0, 300) } } : {});
    /** The notice a redirect carried (`?done=` or `?error=`), shown only when this server signed it for this operator. */
    const carried = () => {
      for (const [param, kind] of [['error', 'error'], ['done', 'info']] as const) {
        const text = url.searchParams.get(param);
        if (text !== null && deps.sessions.noticeValid(client, kind, text, url.searchParams.get('sig'))) return notice(text, kind);
      }
      return {};
    };
    /** `to` with a notice the next page shows: cut to what it shows, and signed. */
    const withNotice = (to: string, kind: 'info' | 'error', text: string) => {
      const shown = text.slice(0, 300);
      return `${to}?${kind === 'error' ? 'error' : 'done'}=${encodeURIComponent(shown)}&sig=${deps.sessions.signNotice(client, kind, shown)}`;
    };

    if (path === '/console/logout' && form) {
      // Revoked in the store first: a copy of the cookie ends with it, on every replica.
      if (session) await deps.sessions.end(session, deps.now());
      deps.log.info('console sign-out', { client });
      return redirect(res, '/console/login', { 'Set-Cookie': cookie(SESSION_COOKIE, '', 0, req) });
    }
    if ((path === '/console' || path === '/console/') && !form) {
      const f: ListFilters = {};
      for (const k of ['status', 'via', 'client', 'since', 'until', 'after'] as const) {
        const v = url.searchParams.get(k);
        if (v) f[k] = v.slice(0, 256);
      }
      const { query, ignored } = toQuery(f, deps.actions.channels);
      const rows = await deps.actions.list(query);
      const warn = ignored.length > 0 ? `Not filtered by ${ignored.join(', ')}: not a value it takes.` : null;
      return send(res, 200, page({ ...shell, title: 'Notifications', section: 'notifications', ...notice(warn, 'error'), body: listBody(rows, f, deps.actions.channels) }));
    }
    const one = /^\/console\/notifications\/([A-Za-z0-9_-]{1,64})(\/html|\/raw|\/payload\.json)?$/.exec(path);
    if (one && !form) {
      const record = await deps.actions.get(one[1]!);
      if (!record) {
        // No record yet (scheduled, held) or ever (retracted, expired): the outbox entry is its page.
        const unrecorded = one[2] ? null : await deps.actions.unrecorded(one[1]!);
        if (!unrecorded) return errorPage(res, 404, `No notification has id ${one[1]}.`, 'notifications');
        const { entry, waiting } = unrecorded;
        const body = waitingDetailBody(entry, csrf, waiting, await deps.actions.audit(entry.id));
        return send(res, 200, page({ ...shell, title: `Notification ${entry.id}`, section: 'notifications', ...carried(), body }));
      }
      const raw = rawMessage(record.payload);
      switch (one[2]) {
        case '/html': {
          const body = raw === undefined ? undefined : htmlBody(parseMime(raw));
          res.writeHead(body === undefined ? 404 : 200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': MAIL_CSP, ...SECURITY_HEADERS });
          return void res.end(body ?? '');
        }
        case '/raw':
          if (raw === undefined) return errorPage(res, 404, `Notification ${record.id} carries no MIME message.`, 'notifications');
          res.writeHead(200, { 'Content-Type': 'message/rfc822', 'Content-Disposition': `attachment; filename="${record.id}.eml"`, ...SECURITY_HEADERS });
          return void res.end(raw);
        case '/payload.json':
          res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Disposition': `attachment; filename="${record.id}.json"`, ...SECURITY_HEADERS });
          return void res.end(JSON.stringify(record.payload, null, 2));
        default:
          return send(res, 200, page({ ...shell, title: `Notification ${record.id}`, section: 'notifications', ...carried(), body: detailBody(record, csrf, await deps.actions.audit(record.id), url.searchParams.get('payload') === 'whole') }));
      }
    }
    if (path === '/console/approvals' && !form) {
      const after = url.searchParams.get('after') ?? '';
      const from = /^[A-Za-z0-9_-]{1,64}$/.test(after) ? after : undefined;
      const rows = await deps.actions.pending(from);
      return send(res, 200, page({ ...shell, title: 'Pending approvals', section: 'approvals', ...carried(), body: approvalsBody(rows, csrf, from) }));
    }
    const decided = /^\/console\/approvals\/([A-Za-z0-9_-]{1,64})$/.exec(path);
    if (decided && form) {
      const decision = form.get('decision');
      if (decision !== 'approve' && decision !== 'decline') return errorPage(res, 400, 'Choose Approve or Decline.', 'approvals');
      const reason = (form.get('reason') ?? '').trim().slice(0, 500);
      const outcome = await deps.actions.decide(decided[1]!, { decision, by: client, seenSha256: form.get('payload_sha256') ?? '', ...(reason ? { reason } : {}) });
      const said =
        outcome.status === 'declined'
          ? `Declined ${decided[1]}: nothing was sent.`
          : `Approved ${decided[1]}: ${
              outcome.record.status === 'sent' || outcome.record.status === 'dry_run'
                ? `it left (${outcome.record.status}).`
                : outcome.record.status === 'approved'
                  ? 'it waits in the outbox, and the next release sends it.'
                  : `its send ended ${outcome.record.status}.`
            }`;
      return redirect(res, withNotice('/console/approvals', 'info', said));
    }
    if (path === '/console/waiting' && !form) {
      const entries = await deps.actions.waiting();
      return send(res, 200, page({ ...shell, title: 'Scheduled and held', section: 'waiting', ...carried(), body: waitingBody(entries, csrf) }));
    }
    const retract = /^\/console\/waiting\/([A-Za-z0-9_-]{1,64})\/retract$/.exec(path);
    if (retract && form) {
      const r = await deps.actions.retract(retract[1]!, client);
      if (r.kind === 'not_found') return errorPage(res, 404, `Nothing waits under ${retract[1]}.`, 'waiting');
      if (r.kind === 'not_waiting') return errorPage(res, 409, `${retract[1]} is ${r.entry.state}, no longer waiting: it cannot be retracted here.`, 'waiting');
      deps.log.info('retracted in the console', { notificationId: retract[1], by: client });
      return redirect(res, withNotice('/console/waiting', 'info', `Retracted ${retract[1]}: it will not be sent.`));
    }
    // Banners withheld from this operator (NOTIFY_TOOLS, NOTIFY_TOKEN_TOOLS) are no page here either.
    if ((path === '/console/banners' || path.startsWith('/console/banners/')) && !(form ? bannerAccess.change : bannerAccess.see)) {
      return errorPage(res, 404, `No console page ${path}.`, 'notifications');
    }
    if (path === '/console/banners' && !form) {
      const active = await deps.actions.activeBanners();
      return send(res, 200, page({ ...shell, title: 'Banners', section: 'banners', ...carried(), body: bannersBody(active, csrf, bannerAccess.change) }));
    }
    if (path === '/console/banners' && form) {
      const args: Record<string, unknown> = { text: form.get('text') ?? '', audience: form.get('audience') ?? '' };
      const severity = form.get('severity');
      if (severity) args.severity = severity;
      const expires = form.get('expires_at');
      if (expires) args.expires_at = /[zZ]|[+-]\d\d:\d\d$/.test(expires) ? expires : `${expires.length === 16 ? `${expires}:00` : expires}Z`;
      const r = await deps.actions.showBanner(args, client);
      return redirect(res, r.ok ? withNotice('/console/banners', 'info', `Showing banner ${String(r.result.banner_id)}.`) : withNotice('/console/banners', 'error', `${r.code}: ${r.message}`));
    }
    const dismiss = /^\/console\/banners\/([A-Za-z0-9_-]{1,64})\/dismiss$/.exec(path);
    if (dismiss && form) {
      const r = await deps.actions.dismissBanner(dismiss[1]!, client);
      return redirect(res, r.ok ? withNotice('/console/banners', 'info', `Dismissed banner ${dismiss[1]}.`) : withNotice('/console/banners', 'error', `${r.code}: ${r.message}`));
    }
    return errorPage(res, 404, `No console page ${path}.`, 'notifications');
  }
}
