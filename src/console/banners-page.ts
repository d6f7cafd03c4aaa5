/** Banners: the active ones with a Dismiss button each, and a form to show one (neither when the operator may not change banners). */
import type { BannerRecord } from '../store/types.js';
import { html, type Html } from './html.js';
import { csrfField, statusChip, time } from './layout.js';

export function bannersBody(active: readonly BannerRecord[], csrf: string, change = true): Html {
  const form = html`<section class="card" aria-labelledby="show"><h2 id="show">Show a banner</h2>
    <form method="post" action="/console/banners">
      ${csrfField(csrf)}
      <label for="banner-text">Text</label>
      <textarea id="banner-text" name="text" required maxlength="500"></textarea>
      <div class="filters">
        <label>Audience<input name="audience" value="all" required maxlength="64" pattern="[a-z0-9:_\\-]+"></label>
        <label>Severity<select name="severity"><option value="info">info</option><option value="warning">warning</option><option value="critical">critical</option></select></label>
        <label>Expires (UTC, optional)<input type="datetime-local" name="expires_at"></label>
      </div>
      <div class="actions"><button type="submit">Show banner</button></div>
    </form></section>`;
  const list =
    active.length === 0
      ? html`<p class="empty">No banner is showing.</p>`
      : html`<table class="rows"><caption class="skip">Active banners</caption>
        <thead><tr><th scope="col">Text</th><th scope="col">Audience</th><th scope="col">Severity</th><th scope="col">Expires</th>${change ? html`<th scope="col">Action</th>` : ''}</tr></thead><tbody>
        ${active.map(
          (b) => html`<tr>
            <td data-label="Text">${b.text}</td>
            <td data-label="Audience">${b.audience}</td>
            <td data-label="Severity">${statusChip(b.severity)}</td>
            <td data-label="Expires">${time(b.expires_at)}</td>
            ${
              change
                ? html`<td data-label="Action"><form method="post" action="/console/banners/${encodeURIComponent(b.id)}/dismiss">${csrfField(csrf)}
              <button type="submit" class="secondary" aria-label="Dismiss banner ${b.id}">Dismiss</button></form></td>`
                : ''
            }
          </tr>`,
        )}</tbody></table>`;
  return html`<h2>Showing now</h2>${list}${change ? form : ''}`;
}
