/**
 * One notification's audit entries, for its page (DESIGN section 9, "audit entries"): what
 * the chain holds about it, oldest first. Entries carry digests and recipient classes only,
 * so nothing here is more than the page shows elsewhere; `notify-mcp audit verify` is what
 * says the chain is intact, not this list.
 */
import type { AuditEntry } from '../store/types.js';
import { html, type Html } from './html.js';
import { time } from './layout.js';

/** A digest's first 16 hex digits: enough to tell entries apart and to find one in an export. */
const short = (hex: string) => (hex.length > 16 ? `${hex.slice(0, 16)}…` : hex);

export function auditSection(entries: readonly AuditEntry[]): Html {
  return html`<section class="card" aria-labelledby="audit"><h2 id="audit">Audit entries</h2>
  ${
    entries.length === 0
      ? html`<p class="muted">None for this notification.</p>`
      : html`<table class="rows"><caption class="skip">Audit entries of this notification, oldest first</caption>
    <thead><tr><th scope="col">Seq</th><th scope="col">Time</th><th scope="col">Kind</th><th scope="col">Client</th><th scope="col">Tool</th><th scope="col">Digest</th></tr></thead><tbody>
    ${entries.map(
      (e) =>
        html`<tr><td data-label="Seq">${e.seq}</td><td data-label="Time">${time(e.at)}</td><td data-label="Kind">${e.kind}</td><td data-label="Client">${e.client ?? '—'}</td><td data-label="Tool">${e.tool ?? '—'}</td><td data-label="Digest"><code title="${e.digest}">${short(e.digest)}</code></td></tr>`,
    )}</tbody></table>
    <p class="muted">Digests only: bodies and addresses are not in the audit. <code>notify-mcp audit verify</code> checks the whole chain.</p>`
  }
  </section>`;
}
