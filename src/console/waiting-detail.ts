/**
 * One send the outbox holds without a delivery record: waiting for its time (send_at, quiet
 * hours), or taken back or expired before it left. Its record is the outbox entry: the call
 * as kept, when it is (or was) due, and where it ended; a waiting one has a Retract button.
 */
import type { AuditEntry, OutboxEntry } from '../store/types.js';
import { auditSection } from './audit-section.js';
import { html, type Html } from './html.js';
import { csrfField, statusChip, time } from './layout.js';

/** How much of the call the page prints. */
const SHOWN_CALL_CHARS = 20_000;

const WHAT_STATE_MEANS: Record<string, string> = {
  scheduled: 'It waits for the time its sender asked for (send_at).',
  held: 'It waits for the end of a quiet-hours window.',
  releasing: 'A release is sending it now.',
  cancelled: 'It was retracted before it left: it is never sent.',
  expired: 'It was due too long ago (past the grace): it is never sent.',
  failed: 'Its release was refused: nothing was sent.',
  unknown: 'Its release may have reached the provider: see the audit entries.',
};

export function waitingDetailBody(e: OutboxEntry, csrf: string, waiting: boolean, audit: readonly AuditEntry[] = []): Html {
  const call = JSON.stringify(e.call, null, 2);
  const shown =
    call.length > SHOWN_CALL_CHARS ? `${call.slice(0, SHOWN_CALL_CHARS)}\n… (${call.length - SHOWN_CALL_CHARS} more characters)` : call;
  return html`
  <section class="card" aria-labelledby="facts"><h2 id="facts">Facts</h2>
  <p>${WHAT_STATE_MEANS[e.state] ?? ''}</p>
  <dl class="facts">
    <dt>Status</dt><dd>${statusChip(e.state)}</dd>
    <dt>Channel</dt><dd>${e.via}</dd>
    <dt>Client</dt><dd>${e.client ?? '—'}</dd>
    <dt>Created</dt><dd>${time(e.created_at)}</dd>
    <dt>Send at</dt><dd>${time(e.send_at)}</dd>
    <dt>Due</dt><dd>${time(e.due_at)}</dd>
    <dt>Ended</dt><dd>${time(e.finished_at)}</dd>
  </dl>
  ${
    waiting
      ? html`<form method="post" action="/console/waiting/${encodeURIComponent(e.id)}/retract" class="actions">${csrfField(csrf)}
      <button type="submit" class="secondary" aria-label="Retract ${e.id}">Retract</button></form>`
      : ''
  }
  </section>
  ${auditSection(audit)}
  <section class="card" aria-labelledby="call"><h2 id="call">The call as kept</h2>
  <p class="muted">What is sent when it is due; the provider payload is built then.</p>
  <pre tabindex="0" aria-label="The call as kept, as JSON">${shown}</pre>
  </section>`;
}
