/**
 * A first send's escalation on its console page (DESIGN section 11): each step, a
 * notification of its own, with its channel, due time and state, and a Stop button while any
 * step still waits (it cancels those, as retract_notification on the first send does).
 */
import type { OutboxEntry } from '../store/types.js';
import { html, type Html } from './html.js';
import { csrfField, statusChip, time } from './layout.js';

const WAITING = new Set(['scheduled', 'held']);

/** Nothing when the send escalates nothing. */
export function escalationSection(rootId: string, steps: readonly OutboxEntry[], csrf: string): Html {
  if (steps.length === 0) return html``;
  const running = steps.some((s) => WAITING.has(s.state));
  return html`<section class="card" aria-labelledby="escalation"><h2 id="escalation">Escalation</h2>
  <p class="muted">${running ? 'Each step leaves at its time unless someone answers first.' : 'No step waits any more.'}</p>
  <table class="rows"><caption class="skip">The steps of this escalation, in order</caption>
  <thead><tr><th scope="col">Step</th><th scope="col">Channel</th><th scope="col">Due</th><th scope="col">State</th></tr></thead><tbody>
  ${steps.map(
    (s) =>
      html`<tr><td data-label="Step"><a href="/console/notifications/${encodeURIComponent(s.id)}">${s.id}</a></td><td data-label="Channel">${s.via}</td><td data-label="Due">${time(s.due_at)}</td><td data-label="State">${statusChip(s.state)}</td></tr>`,
  )}</tbody></table>
  ${
    running
      ? html`<form method="post" action="/console/notifications/${encodeURIComponent(rootId)}/stop" class="actions">${csrfField(csrf)}
      <button type="submit" class="secondary" aria-label="Stop the escalation of ${rootId}">Stop</button></form>`
      : ''
  }
  </section>`;
}
