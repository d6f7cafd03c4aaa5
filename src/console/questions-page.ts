/** Questions (a send's `ask`): the open ones, and one notification's question with its answer. */
import type { QuestionRecord } from '../store/ports/answers.js';
import { html, type Html } from './html.js';
import { time } from './layout.js';

const expiresAt = (q: QuestionRecord) => q.created_at + q.expires_in_s * 1000;

const choiceList = (q: QuestionRecord) => html`<ol class="choices">${q.choices.map((c) => html`<li>${c}</li>`)}</ol>`;

/** The open questions, newest first: what each asks, and until when. */
export function questionsBody(questions: readonly QuestionRecord[], limit: number): Html {
  if (questions.length === 0) return html`<p class="empty">No question waits for an answer.</p>`;
  const count = questions.length === limit ? `The newest ${limit}` : `${questions.length} open`;
  return html`<p class="muted">${count}, newest first: asked, not answered, not expired.</p>
  <table class="rows"><caption class="skip">Open questions</caption>
    <thead><tr><th scope="col">Asked</th><th scope="col">Notification</th><th scope="col">Choices</th><th scope="col">Client</th><th scope="col">Expires</th></tr></thead>
    <tbody>
    ${questions.map(
      (q) => html`<tr>
        <td data-label="Asked">${time(q.created_at)}</td>
        <td data-label="Notification" class="id"><a href="/console/notifications/${encodeURIComponent(q.notification_id)}">${q.notification_id}</a></td>
        <td data-label="Choices">${q.choices.join(' · ')}</td>
        <td data-label="Client">${q.client ?? '—'}</td>
        <td data-label="Expires">${time(expiresAt(q))}</td>
      </tr>`,
    )}
    </tbody></table>`;
}

/** One notification's question: its choices, and the answer, or why there is none. */
export function questionSection(q: QuestionRecord | null, now: number): Html {
  if (!q) return html``;
  const a = q.answer;
  const state = a
    ? html`<dl class="facts"><dt>Answer</dt><dd><strong>${a.choice}</strong></dd><dt>By</dt><dd>${a.by}</dd><dt>Through</dt><dd>${a.via}</dd><dt>At</dt><dd>${time(a.at)}</dd></dl>`
    : expiresAt(q) <= now
      ? html`<p class="muted">Expired at ${time(expiresAt(q))} without an answer.</p>`
      : html`<p class="muted">Not answered yet; open until ${time(expiresAt(q))}.</p>`;
  return html`<section class="card" aria-labelledby="question"><h2 id="question">Question</h2>
  ${choiceList(q)}
  ${state}
  </section>`;
}
