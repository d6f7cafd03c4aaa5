/**
 * What every console handler shares: the response headers (a CSP that allows no script),
 * cookies, redirects, the error page, form reading, and the request context a handler gets.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConsoleActions } from '../../../../console/actions.js';
import { html } from '../../../../console/html.js';
import { page, type Section } from '../../../../console/layout.js';
import type { Session, Sessions } from '../../../../console/session.js';
import type { HttpToken } from '../../../../config/config.js';
import { errors } from '../../../../core/errors.js';
import type { Logger } from '../../../../core/log.js';
import { readBody } from '../../../body.js';

export const SESSION_COOKIE = 'notify_console';
export const LOGIN_COOKIE = 'notify_console_login';
/** Forms are small: a reason, a banner's text. */
export const MAX_FORM_BYTES = 64 * 1024;

/** No script from anywhere, styles and frames from this origin only, forms posted only here, never framed. */
const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** A message's own HTML: a sandbox (no script, an opaque origin), its inline styles, no remote load of any kind. */
export const MAIL_CSP =
  "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'; base-uri 'none'; form-action 'none'";

export const SECURITY_HEADERS = {
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

type Notice = { notice: { kind: 'info' | 'error'; text: string } } | Record<string, never>;

/** What a handler of a signed-in operator's request gets. */
export interface ConsoleRequest {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** The pattern's captures. */
  params: string[];
  client: string;
  session: Session | undefined;
  /** A POST's form, its CSRF token already checked. */
  form: URLSearchParams | undefined;
  csrf: string;
  bannerAccess: { see: boolean; change: boolean };
  /** The page shell's session part (who, the CSRF token, the sections withheld). */
  shell: { session: { client: string; csrf: string; withheld: readonly 'banners'[] } };
  /** The notice a redirect carried (`?done=` or `?error=`), shown only when this server signed it for this operator. */
  carried(): Notice;
  /** `to` with a notice the next page shows: cut to what it shows, and signed. */
  withNotice(to: string, kind: 'info' | 'error', text: string): string;
}

export type ConsoleHandler = (deps: ConsoleDeps, r: ConsoleRequest) => Promise<void> | void;

export const notice = (text: string | null, kind: 'info' | 'error' = 'info'): Notice =>
  text ? { notice: { kind, text: text.slice(0, 300) } } : {};

export function consoleRequest(
  deps: ConsoleDeps,
  base: Pick<ConsoleRequest, 'req' | 'res' | 'url' | 'client' | 'session' | 'form'>,
): ConsoleRequest {
  const { url, client, session } = base;
  const csrf = session ? deps.sessions.csrf(session) : '';
  const bannerAccess = deps.actions.bannerAccess(client);
  return {
    ...base,
    params: [],
    csrf,
    bannerAccess,
    shell: { session: { client, csrf, withheld: bannerAccess.see ? [] : (['banners'] as const) } },
    carried() {
      for (const [param, kind] of [
        ['error', 'error'],
        ['done', 'info'],
      ] as const) {
        const text = url.searchParams.get(param);
        if (text !== null && deps.sessions.noticeValid(client, kind, text, url.searchParams.get('sig'))) return notice(text, kind);
      }
      return {};
    },
    withNotice(to, kind, text) {
      const shown = text.slice(0, 300);
      return `${to}?${kind === 'error' ? 'error' : 'done'}=${encodeURIComponent(shown)}&sig=${deps.sessions.signNotice(client, kind, shown)}`;
    },
  };
}

export function cookies(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

export function cookie(name: string, value: string, maxAgeS: number, req: IncomingMessage): string {
  // Secure when the request reached us over TLS (a proxy says so); on plain loopback HTTP a Secure cookie would never come back.
  const secure = req.headers['x-forwarded-proto'] === 'https' ? '; Secure' : '';
  return `${name}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure}`;
}

export function send(res: ServerResponse, status: number, body: string, headers: Record<string, string | string[]> = {}): void {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': PAGE_CSP,
    'X-Frame-Options': 'DENY',
    ...SECURITY_HEADERS,
    ...headers,
  });
  res.end(body);
}

export const redirect = (res: ServerResponse, to: string, headers: Record<string, string | string[]> = {}) =>
  send(res, 303, '', { Location: to, ...headers });

export const errorPage = (res: ServerResponse, status: number, message: string, section: Section = 'login') =>
  send(
    res,
    status,
    page({
      title: status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : 'Cannot do that',
      section,
      notice: { kind: 'error', text: message },
      body: html`<p><a href="/console">Back to the console</a></p>`,
    }),
  );

/** A path inside the console to return to after signing in; anything else is the console's start. */
export function safeNext(next: string | null | undefined): string {
  return next && /^\/console(\/[A-Za-z0-9_\-./?=&%]*)?$/.test(next) && !next.includes('//') ? next : '/console';
}

export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The Origin of a browser's POST must be this server (as the Host names it); a POST without one (a script) passes. */
export function crossOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    return true;
  }
}

export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw errors.invalidField('Send the form as application/x-www-form-urlencoded.', {});
  return new URLSearchParams((await readBody(req, MAX_FORM_BYTES)).toString('utf8'));
}
