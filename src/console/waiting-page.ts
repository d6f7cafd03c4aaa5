/** Scheduled and held sends (send_at, quiet hours): each with its due time and a Retract button. */
import type { OutboxEntry } from '../store/types.js';
import { html, type Html } from './html.js';
import { csrfField, statusChip, time } from './layout.js';

/** What a waiting call says, for a person to recognise it by: its subject or text. */
export function callSummary(call: Record<string, unknown>): string | undefined {
  for (const k of ['subject', 'text', 'body']) if (typeof call[k] === 'string') return (call[k] as string).slice(0, 200);
  return undefined;
}

export function waitingBody(entries: readonly OutboxEntry[], csrf: string): Html {
  if (entries.length === 0) return html`<p class="empty">Nothing is scheduled or held.</p>`;
  return html`<p class="muted">${entries.length} waiting, soonest first. Retracting one means it is never sent.</p>
  <table class="rows"><caption class="skip">Scheduled and held sends</caption>
    <thead><tr><th scope="col">Due</th><th scope="col">Notification</th><th scope="col">What</th><th scope="col">Channel</th><th scope="col">Client</th><th scope="col">State</th><th scope="col">Action</th></tr></thead>
    <tbody>
    ${entries.map(
      (e) => html`<tr>
        <td data-label="Due">${time(e.due_at)}</td>
        <td data-label="Notification" class="id"><a href="/console/notifications/${encodeURIComponent(e.id)}">${e.id}</a></td>
        <td data-label="What">${callSummary(e.call) ?? '—'}</td>
        <td data-label="Channel">${e.via}</td>
        <td data-label="Client">${e.client ?? '—'}</td>
        <td data-label="State">${statusChip(e.state)}</td>
        <td data-label="Action"><form method="post" action="/console/waiting/${encodeURIComponent(e.id)}/retract">${csrfField(csrf)}
          <button type="submit" class="secondary" aria-label="Retract ${e.id}">Retract</button></form></td>
      </tr>`,
    )}
    </tbody></table>`;
}
