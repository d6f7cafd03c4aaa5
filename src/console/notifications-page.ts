/** The notifications list (newest first, with filters) and one notification, whole. */
import { NOTIFICATION_STATES, type AuditEntry, type DeliveryQuery, type DeliveryRecord, type OutboxEntry } from '../store/types.js';
import { auditSection } from './audit-section.js';
import { html, type Html } from './html.js';
import { csrfField, statusChip, time } from './layout.js';
import { messageView } from './message-view.js';
import { decodeWords, htmlBody, messageHeaders, parseMime, partsOf, rawMessage } from './mime.js';
import { callSummary } from './waiting-page.js';

/** A row of the list: a delivery record, or a send the outbox holds without one (scheduled, held, cancelled…). */
export type ListRow = { kind: 'record'; id: string; record: DeliveryRecord } | { kind: 'waiting'; id: string; entry: OutboxEntry };

/** The list's filters as the query string carries them. */
export interface ListFilters {
  status?: string;
  via?: string;
  client?: string;
  since?: string;
  until?: string;
  /** The last id of the page before: the next page starts after it. */
  after?: string;
}

/** Rows one page shows. */
export const PAGE_ROWS = 100;

/** `YYYY-MM-DDTHH:MM` (a datetime-local field, read as UTC) or a full ISO time. */
function parseTime(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The store query for these filters; a value that is not one of the choices filters nothing, and says so. */
export function toQuery(f: ListFilters, channels: readonly string[]): { query: DeliveryQuery; ignored: string[] } {
  const query: DeliveryQuery = { limit: PAGE_ROWS };
  const ignored: string[] = [];
  if (f.status) {
    if ((NOTIFICATION_STATES as readonly string[]).includes(f.status)) query.status = f.status as DeliveryQuery['status'];
    else ignored.push('status');
  }
  if (f.via) {
    if (channels.includes(f.via)) query.via = f.via;
    else ignored.push('channel');
  }
  if (f.client) query.client = f.client.slice(0, 256);
  if (f.after) {
    if (/^[A-Za-z0-9_-]{1,64}$/.test(f.after)) query.after = f.after;
    else ignored.push('page');
  }
  for (const [name, key] of [
    ['since', 'since'],
    ['until', 'until'],
  ] as const) {
    if (!f[name]) continue;
    const ms = parseTime(f[name]);
    if (ms === undefined) ignored.push(name);
    else query[key] = ms;
  }
  return { query, ignored };
}

const option = (value: string, label: string, selected: string | undefined) =>
  html`<option value="${value}"${value === (selected ?? '') ? html` selected` : ''}>${label}</option>`;

export function listBody(rows: readonly ListRow[], f: ListFilters, channels: readonly string[]): Html {
  const filters = html`<form class="filters card" method="get" action="/console" role="search" aria-label="Filter notifications">
    <label>Status<select name="status">${option('', 'Any', f.status)}${NOTIFICATION_STATES.map((s) => option(s, s.replace('_', ' '), f.status))}</select></label>
    <label>Channel<select name="via">${option('', 'Any', f.via)}${channels.map((c) => option(c, c, f.via))}</select></label>
    <label class="wide">Client<input name="client" value="${f.client ?? ''}" maxlength="256" autocomplete="off"></label>
    <label>From (UTC)<input type="datetime-local" name="since" value="${f.since ?? ''}"></label>
    <label>Until (UTC)<input type="datetime-local" name="until" value="${f.until ?? ''}"></label>
    <button type="submit">Filter</button>
    <a class="button secondary" href="/console">Clear</a>
  </form>`;
  const filtered = Object.values(f).some((v) => v);
  if (rows.length === 0)
    return html`${filters}<p class="empty">${f.after ? 'No older notifications.' : filtered ? 'No notifications match.' : 'No notifications yet.'}</p>`;
  const count = `${rows.length} ${rows.length === 1 ? 'notification' : 'notifications'}`;
  // A full page may have more behind it: the next one starts after its last row (ties in time included).
  const older =
    rows.length === PAGE_ROWS
      ? `/console?${new URLSearchParams({ ...Object.fromEntries(Object.entries(f).filter(([, v]) => v)), after: rows.at(-1)!.id }).toString()}`
      : undefined;
  return html`${filters}
  <p class="muted">${f.after ? `${count} older than the page before` : rows.length === PAGE_ROWS ? `The newest ${PAGE_ROWS}` : count}, newest first.</p>
  <table class="rows">
    <caption class="skip">Notifications, newest first</caption>
    <thead><tr><th scope="col">Time</th><th scope="col">Notification</th><th scope="col">What</th><th scope="col">Channel</th><th scope="col">Client</th><th scope="col">Status</th><th scope="col">Attempts</th></tr></thead>
    <tbody>
    ${rows.map((row) => {
      const r = row.kind === 'record' ? row.record : undefined;
      const e = row.kind === 'waiting' ? row.entry : undefined;
      const what = r ? headline(r) : callSummary(e!.call);
      const client = (r ?? e)!.client;
      return html`<tr>
        <td data-label="Time">${time((r ?? e)!.created_at)}</td>
        <td data-label="Notification" class="id"><a href="/console/notifications/${encodeURIComponent(row.id)}">${row.id}</a></td>
        <td data-label="What">${what ?? html`<span class="muted">—</span>`}</td>
        <td data-label="Channel">${(r ?? e)!.via}</td>
        <td data-label="Client">${client ?? html`<span class="muted">—</span>`}</td>
        <td data-label="Status">${r ? html`${statusChip(r.status)}${r.error_code ? html` <span class="muted">${r.error_code}</span>` : ''}` : statusChip(e!.state)}</td>
        <td data-label="Attempts">${r ? r.attempts : 0}</td>
      </tr>`;
    })}
    </tbody>
  </table>
  ${older ? html`<p><a class="button secondary" href="${older}">Older notifications</a></p>` : ''}`;
}

/** The subject line of a recorded message, or a payload's text, for a person to recognise it by. */
export function headline(r: DeliveryRecord): string | undefined {
  const raw = rawMessage(r.payload);
  if (raw !== undefined) {
    // The header section alone: a list reads no message body.
    const subject = messageHeaders(raw).get('subject');
    return subject === undefined ? undefined : decodeWords(subject);
  }
  const p = r.payload as Record<string, unknown> | null;
  // Cut for a row, and saying so: the notification's page has all of it.
  for (const k of ['text', 'body', 'Body'])
    if (typeof p?.[k] === 'string') return (p[k] as string).length > 200 ? `${(p[k] as string).slice(0, 200)}…` : (p[k] as string);
  return undefined;
}

/** Every recipient the payload names (a message's envelope holds bcc too), else those the held send recorded. */
export function recipientsOf(r: DeliveryRecord): string[] {
  if (r.approval?.recipients) return r.approval.recipients;
  const to = (r.payload as { envelope?: { to?: unknown } } | null)?.envelope?.to;
  return Array.isArray(to) ? to.map(String) : [];
}

/** How much of a payload the page prints unless asked for all of it; the download has all of it too. */
const SHOWN_PAYLOAD_CHARS = 20_000;

/** The payload as JSON, and how many characters of it were left out (0: none). */
function payloadText(payload: unknown, whole: boolean): { text: string; more: number } {
  const text = JSON.stringify(payload, null, 2) ?? 'null';
  return whole || text.length <= SHOWN_PAYLOAD_CHARS
    ? { text, more: 0 }
    : { text: text.slice(0, SHOWN_PAYLOAD_CHARS), more: text.length - SHOWN_PAYLOAD_CHARS };
}

/** The approve and decline form of a held send, bound to the payload hash the person is shown. */
export function decisionForm(r: DeliveryRecord, csrf: string): Html {
  const idAttr = `reason-${r.id}`;
  return html`<form method="post" action="/console/approvals/${encodeURIComponent(r.id)}" class="decision">
    ${csrfField(csrf)}
    <input type="hidden" name="payload_sha256" value="${r.approval?.payload_sha256 ?? ''}">
    <label for="${idAttr}">Reason (optional)</label>
    <textarea id="${idAttr}" name="reason" maxlength="500"></textarea>
    <div class="actions">
      <button type="submit" name="decision" value="approve">Approve</button>
      <button type="submit" name="decision" value="decline" class="danger">Decline</button>
    </div>
  </form>`;
}

/** The decision card of a send awaiting approval: what approving sends, and the form; nothing for any other. */
function decisionCard(r: DeliveryRecord, csrf: string): Html | '' {
  const a = r.approval;
  return r.status === 'pending_approval'
    ? html`<section class="card" aria-labelledby="decide"><h2 id="decide">Waiting for approval</h2>
    <p>Approving sends exactly the payload below (sha256 <code>${a?.payload_sha256 ?? ''}</code>)${a?.expires_at ? html`; it expires ${time(a.expires_at)}` : ''}.</p>
    ${decisionForm(r, csrf)}</section>`
    : '';
}

/** The record's facts: status, channel, client, times, provider, error, key, latency. */
function factsSection(r: DeliveryRecord): Html {
  return html`<section class="card" aria-labelledby="facts"><h2 id="facts">Facts</h2>
  <dl class="facts">
    <dt>Status</dt><dd>${statusChip(r.status)}</dd>
    <dt>Channel</dt><dd>${r.via}</dd>
    <dt>Client</dt><dd>${r.client ?? '—'}</dd>
    <dt>Created</dt><dd>${time(r.created_at)}</dd>
    <dt>Status changed</dt><dd>${time(r.status_updated_at)}</dd>
    <dt>Provider</dt><dd>${r.provider}</dd>
    <dt>Provider message id</dt><dd>${r.provider_message_id ?? '—'}</dd>
    <dt>Provider status</dt><dd>${r.provider_status ?? '—'}${r.provider_status_code ? ` (${r.provider_status_code})` : ''}</dd>
    <dt>Error</dt><dd>${r.error_code ?? '—'}</dd>
    <dt>Idempotency key</dt><dd>${r.idempotency_key ?? '—'}</dd>
    <dt>Latency</dt><dd>${r.latency_ms} ms</dd>
  </dl></section>`;
}

/** How a person decided the send, when one was asked. */
function approvalSection(a: DeliveryRecord['approval']): Html | '' {
  return a
    ? html`<section class="card" aria-labelledby="approval"><h2 id="approval">Approval</h2><dl class="facts">
    <dt>Outcome</dt><dd>${a.outcome}</dd>
    <dt>Why</dt><dd>${a.reasons.join(', ') || '—'}</dd>
    <dt>Payload sha256</dt><dd><code>${a.payload_sha256}</code></dd>
    <dt>Decided by</dt><dd>${a.decided_by ?? '—'}</dd>
    <dt>Decided</dt><dd>${time(a.decided_at)}</dd>
    <dt>Reason</dt><dd>${a.reason ?? '—'}</dd>
  </dl></section>`
    : '';
}

/** Every provider call; the endpoint column only where an attempt names one (a relay, a sender, a target). */
function attemptsSection(r: DeliveryRecord): Html {
  const log = r.attempt_log;
  const named = log.some((x) => x.endpoint !== undefined);
  const where = (x: DeliveryRecord['attempt_log'][number]) => (named ? html`<td>${x.endpoint ?? '—'}</td>` : '');
  return html`<section class="card" aria-labelledby="attempts"><h2 id="attempts">Attempts</h2>
  ${
    log.length === 0
      ? html`<p class="muted">No provider call${r.status === 'dry_run' ? ' (a dry run)' : ''}.</p>`
      : html`<table><thead><tr><th scope="col">#</th><th scope="col">Started</th>${named ? html`<th scope="col">Endpoint</th>` : ''}<th scope="col">Outcome</th><th scope="col">Vendor code</th><th scope="col">Latency</th></tr></thead><tbody>
    ${log.map((x) => html`<tr><td>${x.attempt}</td><td>${time(x.at)}</td>${where(x)}<td>${x.outcome}</td><td>${x.vendor_code ?? '—'}</td><td>${x.latency_ms} ms</td></tr>`)}</tbody></table>`
  }
  </section>`;
}

export function detailBody(r: DeliveryRecord, csrf: string, audit: readonly AuditEntry[] = [], wholePayload = false): Html {
  const raw = rawMessage(r.payload);
  const message = raw === undefined ? undefined : parseMime(raw);
  // Every part a mail client gets, hashed: one message, so its whole size is the bound.
  const parts = message ? partsOf(message, { sha256: true }) : [];
  const hasHtml = message !== undefined && htmlBody(message) !== undefined;
  const recipients = recipientsOf(r);
  const byKind = message ? messageView(r, 0).recipients : [];
  const shown = payloadText(r.payload, wholePayload);
  const id = encodeURIComponent(r.id);
  return html`
  ${decisionCard(r, csrf)}
  ${factsSection(r)}
  <section class="card" aria-labelledby="recipients"><h2 id="recipients">Recipients</h2>
  ${
    byKind.length > 0
      ? html`<dl class="facts">${byKind.map((x) => html`<dt>${x.label}</dt><dd>${x.names.join(', ') || '—'}</dd>`)}</dl>`
      : recipients.length === 0
        ? html`<p class="muted">In the payload below.</p>`
        : html`<ul>${recipients.map((x) => html`<li>${x}</li>`)}</ul>`
  }
  </section>
  ${approvalSection(r.approval)}
  ${
    message
      ? html`<section class="card" aria-labelledby="message"><h2 id="message">Message</h2>
    ${hasHtml ? html`<iframe class="mail" title="The message's HTML, scripts and remote content off" sandbox="" referrerpolicy="no-referrer" src="/console/notifications/${id}/html"></iframe>` : html`<p class="muted">No HTML part.</p>`}
    <h3>Parts and attachments</h3>
    <p class="muted">Every part the recipient's mail client gets, in order.</p>
    <table><thead><tr><th scope="col">#</th><th scope="col">Type</th><th scope="col">Name</th><th scope="col">Bytes</th><th scope="col">SHA-256</th></tr></thead><tbody>
      ${parts.map((p, i) => html`<tr><td>${i + 1}</td><td>${p.type}${p.attachment ? ' (attachment)' : ''}</td><td>${p.filename ?? '—'}</td><td class="num">${p.size}</td><td><code>${p.sha256 ?? ''}</code></td></tr>`)}</tbody></table>
    <p class="actions"><a class="button secondary" href="/console/notifications/${id}/raw" download>Download raw MIME</a></p>
  </section>`
      : ''
  }
  ${attemptsSection(r)}
  ${auditSection(audit)}
  <section class="card" aria-labelledby="payload"><h2 id="payload">Exact payload</h2>
  ${shown.more > 0 ? html`<p class="notice" role="note">Shown: the first ${SHOWN_PAYLOAD_CHARS} characters; ${shown.more} more are not shown here. <a href="/console/notifications/${id}?payload=whole#payload">Show it whole</a> or download it.</p>` : ''}
  <pre tabindex="0" aria-label="The exact provider payload, as JSON">${shown.text}</pre>${shown.more > 0 ? html`<p class="muted">… ${shown.more} more characters.</p>` : ''}
  <p class="actions"><a class="button secondary" href="/console/notifications/${id}/payload.json" download>Download payload JSON</a></p>
  </section>`;
}
