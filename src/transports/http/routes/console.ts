/**
 * /console: the operator console (src/console/ renders it). Only operators enter: a token
 * of NOTIFY_HTTP_TOKENS whose client is in NOTIFY_OPERATOR_CLIENTS, presented once at
 * /console/login (then an HttpOnly, SameSite=Strict session cookie) or on every request as
 * `Authorization: Bearer`. Every form POST of a cookie session carries a CSRF token bound to
 * that session, and a cross-origin Origin is refused outright. Every page is sent under a
 * CSP that allows no script at all, and a message's HTML only inside a sandboxed frame.
 *
 * The route checks the caller and the form once, then its table (method, path pattern,
 * handler) picks the handler: console/pages.ts.
 */
import { CONSOLE_CSS } from '../../../console/style.js';
import { NotifyError } from '../../../core/errors.js';
import { BodyTooLargeError } from '../../body.js';
import {
  consoleRequest,
  crossOrigin,
  errorPage,
  MAX_FORM_BYTES,
  readForm,
  redirect,
  safeNext,
  SECURITY_HEADERS,
  type ConsoleDeps,
  type ConsoleHandler,
  type ConsoleRequest,
} from './console/kit.js';
import * as pages from './console/pages.js';
import { signIn } from './console/sign-in.js';
import type { Route } from './route.js';

export type { ConsoleDeps } from './console/kit.js';

interface ConsoleEntry {
  /** GET also answers HEAD. */
  method: 'GET' | 'POST';
  pattern: RegExp;
  /** Banner pages withheld from this operator (NOTIFY_TOOLS, NOTIFY_TOKEN_TOOLS) are no page here either. */
  needs?: 'see' | 'change';
  handler: ConsoleHandler;
}

const ID = '([A-Za-z0-9_-]{1,64})';

/** A signed-in operator's pages and actions; the first entry whose method and pattern match answers. */
const TABLE: ConsoleEntry[] = [
  { method: 'POST', pattern: /^\/console\/logout$/, handler: pages.logout },
  { method: 'GET', pattern: /^\/console\/?$/, handler: pages.notifications },
  { method: 'GET', pattern: new RegExp(`^/console/notifications/${ID}(/html|/raw|/payload\\.json)?$`), handler: pages.notification },
  { method: 'POST', pattern: new RegExp(`^/console/notifications/${ID}/stop$`), handler: pages.stop },
  { method: 'GET', pattern: /^\/console\/approvals$/, handler: pages.approvals },
  { method: 'POST', pattern: new RegExp(`^/console/approvals/${ID}$`), handler: pages.decide },
  { method: 'GET', pattern: /^\/console\/waiting$/, handler: pages.waiting },
  { method: 'POST', pattern: new RegExp(`^/console/waiting/${ID}/retract$`), handler: pages.retract },
  { method: 'GET', pattern: /^\/console\/questions$/, handler: pages.questions },
  { method: 'GET', pattern: /^\/console\/banners$/, needs: 'see', handler: pages.banners },
  { method: 'POST', pattern: /^\/console\/banners$/, needs: 'change', handler: pages.showBanner },
  { method: 'POST', pattern: new RegExp(`^/console/banners/${ID}/dismiss$`), needs: 'change', handler: pages.dismissBanner },
];

/** The entry for this request, its captures in `r.params`; no page is a 404. */
function pick(r: ConsoleRequest): ConsoleHandler {
  const method = r.form ? 'POST' : 'GET';
  for (const entry of TABLE) {
    const match = entry.method === method ? entry.pattern.exec(r.url.pathname) : null;
    if (!match) continue;
    if (entry.needs && !r.bannerAccess[entry.needs]) return pages.noPage;
    r.params = match.slice(1).filter((p): p is string => p !== undefined);
    return entry.handler;
  }
  return pages.noPage;
}

export function consoleRoute(deps: ConsoleDeps): Route {
  const signin = signIn(deps);
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
          if (path === '/console/login')
            return get ? signin.form(res, req, safeNext(url.searchParams.get('next'))) : await signin.login(req, res);
          const caller = await signin.who(req);
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
          const r = consoleRequest(deps, { req, res, url, client: caller.client, session: caller.session, form });
          return await pick(r)(deps, r);
        } catch (err) {
          if (err instanceof BodyTooLargeError) return errorPage(res, 413, `The form is over ${MAX_FORM_BYTES} bytes.`);
          if (err instanceof NotifyError) return errorPage(res, err.code === 'NOT_FOUND' ? 404 : 409, err.message);
          throw err;
        }
      },
    };
  };
}
