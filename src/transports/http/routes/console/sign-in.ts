/**
 * Who is asking the console: a bearer token of an operator, or the session cookie that
 * /console/login gave one; and that sign-in form, guarded against login CSRF.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { page } from '../../../../console/layout.js';
import { loginBody } from '../../../../console/login-page.js';
import type { Session } from '../../../../console/session.js';
import { createAuthenticator } from '../../auth.js';
import {
  cookie,
  cookies,
  crossOrigin,
  LOGIN_COOKIE,
  readForm,
  redirect,
  safeNext,
  sameText,
  send,
  SESSION_COOKIE,
  type ConsoleDeps,
} from './kit.js';

/** Who is asking: the signed-in operator, or why not (401: no valid credential; 403: a valid one that is not an operator's). */
export type Who =
  | { kind: 'operator'; client: string; session?: Session }
  | { kind: 'anonymous' }
  | { kind: 'refused'; status: 401 | 403; message: string };

export interface SignIn {
  who(req: IncomingMessage): Promise<Who>;
  /** GET /console/login: the form, with a fresh login-CSRF cookie. */
  form(res: ServerResponse, req: IncomingMessage, next: string, status?: number, notice?: string): void;
  /** POST /console/login: a session cookie for an operator's token, then on to `next`. */
  login(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

const notOperator = (client: string) => `Client ${client} is not an operator (NOTIFY_OPERATOR_CLIENTS): the console is for operators only.`;

export function signIn(deps: ConsoleDeps): SignIn {
  const auth = createAuthenticator(deps.tokens);
  const isOperator = (client: string) => deps.operators.includes(client);

  const who = async (req: IncomingMessage): Promise<Who> => {
    if (req.headers.authorization !== undefined) {
      const r = auth.check(req.headers.authorization);
      if (!r.ok) return { kind: 'refused', status: 401, message: 'The bearer token is not one of NOTIFY_HTTP_TOKENS.' };
      if (!isOperator(r.token.client)) return { kind: 'refused', status: 403, message: notOperator(r.token.client) };
      return { kind: 'operator', client: r.token.client };
    }
    const session = await deps.sessions.check(cookies(req).get(SESSION_COOKIE), deps.now());
    return session ? { kind: 'operator', client: session.client, session } : { kind: 'anonymous' };
  };

  const form: SignIn['form'] = (res, req, next, status = 200, notice) => {
    const token = randomBytes(24).toString('base64url');
    send(
      res,
      status,
      page({
        title: 'Sign in',
        section: 'login',
        ...(notice ? { notice: { kind: 'error' as const, text: notice } } : {}),
        body: loginBody(token, next),
      }),
      { 'Set-Cookie': cookie(LOGIN_COOKIE, token, 600, req) },
    );
  };

  const login = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const posted = await readForm(req);
    const next = safeNext(posted.get('next'));
    // Login CSRF: the form's token must be the one this browser was given with the form.
    const given = cookies(req).get(LOGIN_COOKIE);
    if (crossOrigin(req) || !given || !sameText(given, posted.get('csrf') ?? ''))
      return form(res, req, next, 403, 'The sign-in form expired or came from another site; sign in again.');
    const r = auth.check(`Bearer ${posted.get('token') ?? ''}`);
    if (!r.ok) return form(res, req, next, 401, 'That token is not one of this server’s tokens.');
    if (!isOperator(r.token.client)) return form(res, req, next, 403, notOperator(r.token.client));
    const session = deps.sessions.open(r.token.client, deps.now());
    deps.log.info('console sign-in', { client: r.token.client });
    redirect(res, next, {
      'Set-Cookie': [
        cookie(SESSION_COOKIE, session.value, Math.floor((session.expiresAt - deps.now()) / 1000), req),
        cookie(LOGIN_COOKIE, '', 0, req),
      ],
    });
  };

  return { who, form, login };
}
