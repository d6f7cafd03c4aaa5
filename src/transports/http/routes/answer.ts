/**
 * GET /answer/<token>: the question and a button per choice; it records nothing (mail
 * scanners and chat unfurlers fetch links). POST /answer/<token> with `choice`: the answer.
 * Every refusal is a small page with its status, and records nothing. Public: the token is
 * the credential; a POST must come from this server's own page (Origin, Sec-Fetch-Site).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerPage, type AnswerView } from '../../../console/answer-page.js';
import { answerQuestion, questionState, type AnswerPorts, type AnswerResult } from '../../../notification/answer.js';
import { BodyTooLargeError } from '../../body.js';
import { crossOrigin, MAX_FORM_BYTES, readForm, send } from './console/kit.js';
import type { Route } from './route.js';

export interface AnswerRouteDeps {
  store: AnswerPorts;
  now: () => number;
  /** NOTIFY_PUBLIC_URL: the origin the page is reached at behind a proxy, admitted as a POST's Origin too. */
  publicUrl?: string | undefined;
}

const PATH = /^\/answer(?:\/([^/]*))?\/?$/;

function reply(res: ServerResponse, view: AnswerView, status?: number): void {
  const page = answerPage(view);
  send(res, status ?? page.status, page.body);
}

const refused = (res: ServerResponse, status: number, title: string, text: string) => reply(res, { kind: 'refused', title, text }, status);

const when = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

/** A form from another site (a cross-site POST) must not answer for the person the link was sent to. */
function foreign(req: IncomingMessage, publicUrl: string | undefined): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
  if (!crossOrigin(req)) return false;
  return publicUrl === undefined || req.headers.origin !== new URL(publicUrl).origin;
}

/** What an answer that took nothing says, and its status. */
function notTaken(res: ServerResponse, r: Exclude<AnswerResult, { kind: 'recorded' | 'answered' }>): void {
  switch (r.kind) {
    case 'unknown':
      return refused(res, 404, 'Unknown link', 'This answer link is not known here. Open the whole link from the message.');
    case 'expired':
      return refused(res, 410, 'Question closed', `This question closed at ${when(r.expires_at)} UTC and takes no answer now.`);
    case 'not_sent':
      return refused(
        res,
        409,
        'Not open',
        'The message with this question has not been sent yet (or will not be: declined or taken back), so it takes no answer.',
      );
    case 'live':
      return refused(res, 409, 'Not taken', 'This question takes its answer from its recipients.');
    case 'not_offered':
      return refused(
        res,
        400,
        'Not a choice',
        `That is not one of this question's choices (${r.choices.join(', ')}); nothing was recorded.`,
      );
  }
}

async function showQuestion(deps: AnswerRouteDeps, res: ServerResponse, token: string): Promise<void> {
  const state = await questionState(deps.store, { token }, deps.now());
  switch (state.kind) {
    case 'open': {
      const { prompt, choices } = state.question;
      const view = {
        kind: 'question',
        prompt,
        via: state.record.via,
        choices,
        expiresAt: state.expires_at,
        action: `/answer/${token}`,
      } as const;
      return reply(res, view);
    }
    case 'answered':
      return reply(res, { kind: 'answered', prompt: state.question.prompt, ...state.answer });
    case 'expired':
      return notTaken(res, { kind: 'expired', id: state.question.notification_id, expires_at: state.expires_at });
    case 'not_sent':
      return notTaken(res, { kind: 'not_sent', id: state.question.notification_id });
    case 'unknown':
      return notTaken(res, state);
  }
}

async function takeAnswer(deps: AnswerRouteDeps, req: IncomingMessage, res: ServerResponse, token: string): Promise<void> {
  if (foreign(req, deps.publicUrl)) return refused(res, 403, 'Not from this page', 'An answer can only be sent from its own answer page.');
  if (!token) return refused(res, 400, 'No answer link', 'Open the answer link from the message and choose there.');
  let choice: string | null;
  try {
    choice = (await readForm(req)).get('choice');
  } catch (err) {
    if (err instanceof BodyTooLargeError)
      return refused(res, 413, 'Too large', `An answer is a short form, at most ${MAX_FORM_BYTES} bytes.`);
    return refused(res, 415, 'Not a form', 'Send the answer from its page (a form, application/x-www-form-urlencoded).');
  }
  if (!choice) return refused(res, 400, 'No choice', 'Choose one of the buttons on the answer page.');
  const r = await answerQuestion(deps, { token }, choice, 'link');
  const prompt = r.kind === 'recorded' || r.kind === 'answered' ? ((await deps.store.getQuestion(r.id))?.prompt ?? '') : '';
  if (r.kind === 'recorded') return reply(res, { kind: 'recorded', prompt, choice: r.answer.choice, at: r.answer.at });
  if (r.kind === 'answered') return reply(res, { kind: 'answered', prompt, ...r.answer });
  return notTaken(res, r);
}

export function answerRoute(deps: AnswerRouteDeps): Route {
  return (req, res, url) => {
    const match = PATH.exec(url.pathname);
    if (!match) return undefined;
    const token = match[1] ?? '';
    return {
      name: 'answer',
      async serve() {
        const method = req.method ?? 'GET';
        if (method === 'GET' || method === 'HEAD') return showQuestion(deps, res, token);
        if (method === 'POST') return takeAnswer(deps, req, res, token);
        res.setHeader('Allow', 'GET, HEAD, POST');
        return refused(res, 405, 'Not allowed', `${method} does not answer; open the link and choose.`);
      },
    };
  };
}
