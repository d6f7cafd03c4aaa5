/** Pending approvals: each held send, what it would send, and its Approve and Decline buttons. */
import type { DeliveryRecord } from '../store/types.js';
import { html, type Html } from './html.js';
import { time } from './layout.js';
import { messageView } from './message-view.js';
import type { MimeLeaf } from './mime.js';
import { decisionForm, headline } from './notifications-page.js';

/** Held sends one page shows: each card reads its row's payload, so a page's work is bounded. */
export const APPROVAL_ROWS = 20;

/** How much of a held send's text its card shows; its page shows all of it. */
const CARD_TEXT_CHARS = 2_000;

const partText = (p: MimeLeaf) =>
  `${p.filename !== undefined ? `${p.filename} (${p.type}` : `(${p.type}`}, ${p.size} bytes${p.attachment ? ', attachment' : ''})`;

function card(r: DeliveryRecord, csrf: string): Html {
  const view = messageView(r, CARD_TEXT_CHARS);
  const h = `held-${r.id}`;
  const link = `/console/notifications/${encodeURIComponent(r.id)}`;
  return html`<section class="card" aria-labelledby="${h}">
      <h2 id="${h}">${headline(r) ?? r.id}</h2>
      <dl class="facts">
        <dt>Notification</dt><dd><a href="${link}">${r.id}</a> (full payload)</dd>
        <dt>Channel</dt><dd>${r.via}</dd>
        <dt>From client</dt><dd>${r.client ?? '—'}</dd>
        ${view.recipients.map((x) => html`<dt>${x.label}</dt><dd>${x.names.join(', ') || '—'}</dd>`)}
        ${view.parts ? html`<dt>Parts</dt><dd><ol class="parts">${view.parts.map((p) => html`<li>${partText(p)}</li>`)}</ol></dd>` : ''}
        ${view.media ? html`<dt>Media (fetched by Twilio)</dt><dd><ul class="parts">${view.media.map((u) => html`<li>${u}</li>`)}</ul></dd>` : ''}
        ${view.blocks ? html`<dt>Blocks (shown instead of the text)</dt><dd><ul class="parts">${view.blocks.map((l) => html`<li>${l}</li>`)}</ul></dd>` : ''}
        <dt>Why</dt><dd>${r.approval?.reasons.join(', ') || '—'}</dd>
        <dt>Held since</dt><dd>${time(r.created_at)}</dd>
        <dt>Expires</dt><dd>${time(r.approval?.expires_at)}</dd>
        <dt>Payload sha256</dt><dd><code>${r.approval?.payload_sha256 ?? ''}</code></dd>
      </dl>
      ${view.body ? html`<h3>${view.body.label}</h3><pre tabindex="0">${view.body.text}</pre>${view.body.more > 0 ? html`<p class="muted">${view.body.more} more characters not shown here: <a href="${link}">read it whole</a>.</p>` : ''}` : ''}
      ${decisionForm(r, csrf)}
    </section>`;
}

/** One page of held sends, newest first; `after` the last id of the page before. */
export function approvalsBody(rows: readonly DeliveryRecord[], csrf: string, after?: string): Html {
  if (rows.length === 0) return html`<p class="empty">${after ? 'No older held sends.' : 'Nothing is waiting for approval.'}</p>`;
  const full = rows.length === APPROVAL_ROWS;
  const count = full
    ? `The newest ${APPROVAL_ROWS}${after ? ' after the page before' : ''}`
    : `${rows.length} waiting${after ? ' after the page before' : ''}`;
  return html`<p class="muted">${count}, newest first. Approving sends exactly what is shown; declining sends nothing.</p>
  ${rows.map((r) => card(r, csrf))}
  ${full ? html`<p><a class="button secondary" href="/console/approvals?after=${encodeURIComponent(rows.at(-1)!.id)}">Older held sends</a></p>` : ''}`;
}
