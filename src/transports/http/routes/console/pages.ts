/**
 * The console's pages and actions of a signed-in operator, one small handler each; the route
 * table in ../console.ts says which method and path reach which.
 */
import { approvalsBody } from '../../../../console/approvals-page.js';
import { bannersBody } from '../../../../console/banners-page.js';
import { html } from '../../../../console/html.js';
import { page } from '../../../../console/layout.js';
import { htmlBody, parseMime, rawMessage } from '../../../../console/mime.js';
import { detailBody, listBody, toQuery, type ListFilters } from '../../../../console/notifications-page.js';
import { waitingDetailBody } from '../../../../console/waiting-detail.js';
import { escalationSection } from '../../../../console/escalation-section.js';
import { waitingBody } from '../../../../console/waiting-page.js';
import { questionSection, questionsBody } from '../../../../console/questions-page.js';
import { QUESTION_ROWS } from '../../../../console/actions.js';
import { cookie, errorPage, MAIL_CSP, notice, redirect, SECURITY_HEADERS, send, SESSION_COOKIE, type ConsoleHandler } from './kit.js';

export const logout: ConsoleHandler = async (deps, { req, res, client, session }) => {
  // Revoked in the store first: a copy of the cookie ends with it, on every replica.
  if (session) await deps.sessions.end(session, deps.now());
  deps.log.info('console sign-out', { client });
  return redirect(res, '/console/login', { 'Set-Cookie': cookie(SESSION_COOKIE, '', 0, req) });
};

export const notifications: ConsoleHandler = async (deps, { res, url, shell }) => {
  const f: ListFilters = {};
  for (const k of ['status', 'via', 'client', 'since', 'until', 'after'] as const) {
    const v = url.searchParams.get(k);
    if (v) f[k] = v.slice(0, 256);
  }
  const { query, ignored } = toQuery(f, deps.actions.channels);
  const rows = await deps.actions.list(query);
  const warn = ignored.length > 0 ? `Not filtered by ${ignored.join(', ')}: not a value it takes.` : null;
  return send(
    res,
    200,
    page({
      ...shell,
      title: 'Notifications',
      section: 'notifications',
      ...notice(warn, 'error'),
      body: listBody(rows, f, deps.actions.channels),
    }),
  );
};

/** One notification: its page, or its message as HTML, raw MIME or JSON (`part`). */
export const notification: ConsoleHandler = async (deps, r) => {
  const { res, url, shell, csrf, params } = r;
  const [id, part] = params as [string, string | undefined];
  const record = await deps.actions.get(id);
  if (!record) {
    // No record yet (scheduled, held) or ever (retracted, expired): the outbox entry is its page.
    const unrecorded = part ? null : await deps.actions.unrecorded(id);
    if (!unrecorded) return errorPage(res, 404, `No notification has id ${id}.`, 'notifications');
    const { entry, waiting } = unrecorded;
    const steps = escalationSection(entry.id, await deps.actions.escalation(entry.id), csrf);
    const question = questionSection(await deps.actions.question(entry.id));
    const body = html`${question}${waitingDetailBody(entry, csrf, waiting, await deps.actions.audit(entry.id))}${steps}`;
    return send(res, 200, page({ ...shell, title: `Notification ${entry.id}`, section: 'notifications', ...r.carried(), body }));
  }
  const raw = rawMessage(record.payload);
  switch (part) {
    case '/html': {
      const body = raw === undefined ? undefined : htmlBody(parseMime(raw));
      res.writeHead(body === undefined ? 404 : 200, {
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Security-Policy': MAIL_CSP,
        ...SECURITY_HEADERS,
      });
      return void res.end(body ?? '');
    }
    case '/raw':
      if (raw === undefined) return errorPage(res, 404, `Notification ${record.id} carries no MIME message.`, 'notifications');
      res.writeHead(200, {
        'Content-Type': 'message/rfc822',
        'Content-Disposition': `attachment; filename="${record.id}.eml"`,
        ...SECURITY_HEADERS,
      });
      return void res.end(raw);
    case '/payload.json':
      res.writeHead(200, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Disposition': `attachment; filename="${record.id}.json"`,
        ...SECURITY_HEADERS,
      });
      return void res.end(JSON.stringify(record.payload, null, 2));
    default: {
      const question = questionSection(await deps.actions.question(record.id));
      const detail = detailBody(record, csrf, await deps.actions.audit(record.id), url.searchParams.get('payload') === 'whole');
      const body = html`${question}${detail}${escalationSection(record.id, await deps.actions.escalation(record.id), csrf)}`;
      return send(res, 200, page({ ...shell, title: `Notification ${record.id}`, section: 'notifications', ...r.carried(), body }));
    }
  }
};

export const approvals: ConsoleHandler = async (deps, r) => {
  const after = r.url.searchParams.get('after') ?? '';
  const from = /^[A-Za-z0-9_-]{1,64}$/.test(after) ? after : undefined;
  const rows = await deps.actions.pending(from);
  return send(
    r.res,
    200,
    page({ ...r.shell, title: 'Pending approvals', section: 'approvals', ...r.carried(), body: approvalsBody(rows, r.csrf, from) }),
  );
};

export const decide: ConsoleHandler = async (deps, { res, form, client, params, withNotice }) => {
  const id = params[0]!;
  const decision = form!.get('decision');
  if (decision !== 'approve' && decision !== 'decline') return errorPage(res, 400, 'Choose Approve or Decline.', 'approvals');
  const reason = (form!.get('reason') ?? '').trim().slice(0, 500);
  const outcome = await deps.actions.decide(id, {
    decision,
    by: client,
    seenSha256: form!.get('payload_sha256') ?? '',
    ...(reason ? { reason } : {}),
  });
  const said =
    outcome.status === 'declined'
      ? `Declined ${id}: nothing was sent.`
      : `Approved ${id}: ${
          outcome.record.status === 'sent' || outcome.record.status === 'dry_run'
            ? `it left (${outcome.record.status}).`
            : outcome.record.status === 'approved'
              ? 'it waits in the outbox, and the next release sends it.'
              : `its send ended ${outcome.record.status}.`
        }`;
  return redirect(res, withNotice('/console/approvals', 'info', said));
};

export const waiting: ConsoleHandler = async (deps, r) => {
  const entries = await deps.actions.waiting();
  return send(
    r.res,
    200,
    page({ ...r.shell, title: 'Scheduled and held', section: 'waiting', ...r.carried(), body: waitingBody(entries, r.csrf) }),
  );
};

export const retract: ConsoleHandler = async (deps, { res, client, params, withNotice }) => {
  const id = params[0]!;
  const r = await deps.actions.retract(id, client);
  if (r.kind === 'not_found') return errorPage(res, 404, `Nothing waits under ${id}.`, 'waiting');
  if (r.kind === 'not_waiting')
    return errorPage(res, 409, `${id} is ${r.entry.state}, no longer waiting: it cannot be retracted here.`, 'waiting');
  deps.log.info('retracted in the console', { notificationId: id, by: client });
  return redirect(res, withNotice('/console/waiting', 'info', `Retracted ${id}: it will not be sent.`));
};

export const questions: ConsoleHandler = async (deps, r) => {
  const body = questionsBody(await deps.actions.openQuestions(), QUESTION_ROWS);
  return send(r.res, 200, page({ ...r.shell, title: 'Open questions', section: 'questions', ...r.carried(), body }));
};

/** The Stop button of a running escalation: its steps still waiting are cancelled. */
export const stop: ConsoleHandler = async (deps, { res, client, params, withNotice }) => {
  const id = params[0]!;
  const cancelled = await deps.actions.stopEscalation(id, client);
  const said = cancelled.length > 0 ? `Stopped: ${cancelled.length} step(s) will not be sent.` : 'No step was waiting any more.';
  return redirect(res, withNotice(`/console/notifications/${encodeURIComponent(id)}`, 'info', said));
};

export const banners: ConsoleHandler = async (deps, r) => {
  const active = await deps.actions.activeBanners();
  return send(
    r.res,
    200,
    page({ ...r.shell, title: 'Banners', section: 'banners', ...r.carried(), body: bannersBody(active, r.csrf, r.bannerAccess.change) }),
  );
};

export const showBanner: ConsoleHandler = async (deps, { res, form, client, withNotice }) => {
  const args: Record<string, unknown> = { text: form!.get('text') ?? '', audience: form!.get('audience') ?? '' };
  const severity = form!.get('severity');
  if (severity) args.severity = severity;
  const expires = form!.get('expires_at');
  if (expires) args.expires_at = /[zZ]|[+-]\d\d:\d\d$/.test(expires) ? expires : `${expires.length === 16 ? `${expires}:00` : expires}Z`;
  const r = await deps.actions.showBanner(args, client);
  return redirect(
    res,
    r.ok
      ? withNotice('/console/banners', 'info', `Showing banner ${String(r.result.banner_id)}.`)
      : withNotice('/console/banners', 'error', `${r.code}: ${r.message}`),
  );
};

export const dismissBanner: ConsoleHandler = async (deps, { res, client, params, withNotice }) => {
  const id = params[0]!;
  const r = await deps.actions.dismissBanner(id, client);
  return redirect(
    res,
    r.ok
      ? withNotice('/console/banners', 'info', `Dismissed banner ${id}.`)
      : withNotice('/console/banners', 'error', `${r.code}: ${r.message}`),
  );
};

/** No page at this path (or not this method, or banners withheld from this operator). */
export const noPage: ConsoleHandler = (_deps, { res, url }) => errorPage(res, 404, `No console page ${url.pathname}.`, 'notifications');
