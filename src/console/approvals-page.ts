/** Pending approvals: each held send, what it would send, and its Approve and Decline buttons. */
import type { DeliveryRecord } from '../store/types.js';
import { html, type Html } from './html.js';
import { time } from './layout.js';
import { attachments, parseMime, rawMessage } from './mime.js';
import { decisionForm, headline, recipientsOf } from './notifications-page.js';

export function approvalsBody(rows: readonly DeliveryRecord[], csrf: string): Html {
  if (rows.length === 0) return html`<p class="empty">Nothing is waiting for approval.</p>`;
  return html`<p class="muted">${rows.length} waiting, newest first. Approving sends exactly what is shown; declining sends nothing.</p>
  ${rows.map((r) => {
    const raw = rawMessage(r.payload);
    const files = raw === undefined ? [] : attachments(parseMime(raw));
    const h = `held-${r.id}`;
    return html`<section class="card" aria-labelledby="${h}">
      <h2 id="${h}">${headline(r) ?? r.id}</h2>
      <dl class="facts">
        <dt>Notification</dt><dd><a href="/console/notifications/${encodeURIComponent(r.id)}">${r.id}</a> (full payload)</dd>
        <dt>Channel</dt><dd>${r.via}</dd>
        <dt>From client</dt><dd>${r.client ?? '—'}</dd>
        <dt>Recipients</dt><dd>${recipientsOf(r).join(', ') || '—'}</dd>
        ${files.length > 0 ? html`<dt>Attachments</dt><dd>${files.map((f) => `${f.filename} (${f.type}, ${f.size} bytes)`).join('; ')}</dd>` : ''}
        <dt>Why</dt><dd>${r.approval?.reasons.join(', ') || '—'}</dd>
        <dt>Held since</dt><dd>${time(r.created_at)}</dd>
        <dt>Expires</dt><dd>${time(r.approval?.expires_at)}</dd>
        <dt>Payload sha256</dt><dd><code>${r.approval?.payload_sha256 ?? ''}</code></dd>
      </dl>
      ${decisionForm(r, csrf)}
    </section>`;
  })}`;
}
