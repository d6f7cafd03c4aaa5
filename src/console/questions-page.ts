/** Questions (a send's `ask`): the open ones, and one notification's question with its answer. */
import type { QuestionState } from '../notification/answer.js';
import { html, type Html } from './html.js';
import { time } from './layout.js';

/** A question the list shows: open (until `expires_at`), or asked by a message that has not left yet. */
export type OpenQuestion = Extract<QuestionState, { kind: 'open' | 'not_sent' }>;

const choiceList = (choices: readonly string[]) => html`<ol class="choices">${choices.map((c) => html`<li>${c}</li>`)}</ol>`;
const until = (q: OpenQuestion) => (q.kind === 'open' ? time(q.expires_at) : html`<span class="muted">not sent yet</span>`);

/** The open questions, newest first: what each offers, and until when. */
export function questionsBody(questions: readonly OpenQuestion[], limit: number): Html {
  if (questions.length === 0) return html`<p class="empty">No question waits for an answer.</p>`;
  const count = questions.length === limit ? `The newest ${limit}` : `${questions.length} open`;
  return html`<p class="muted">${count}, newest first: asked, neither answered nor expired. A question's life counts from when its message left.</p>
  <table class="rows"><caption class="skip">Open questions</caption>
    <thead><tr><th scope="col">Asked</th><th scope="col">Notification</th><th scope="col">Question</th><th scope="col">Choices</th><th scope="col">Client</th><th scope="col">Open until</th></tr></thead>
    <tbody>
    ${questions.map(
      (s) => html`<tr>
        <td data-label="Asked">${time(s.question.created_at)}</td>
        <td data-label="Notification" class="id"><a href="/console/notifications/${encodeURIComponent(s.question.notification_id)}">${s.question.notification_id}</a></td>
        <td data-label="Question">${s.question.prompt.slice(0, 200)}</td>
        <td data-label="Choices">${s.question.choices.join(' · ')}</td>
        <td data-label="Client">${s.question.client ?? '—'}</td>
        <td data-label="Open until">${until(s)}</td>
      </tr>`,
    )}
    </tbody></table>`;
}

/** One notification's question: its choices, and the answer, or why there is none. */
export function questionSection(s: QuestionState): Html {
  if (s.kind === 'unknown') return html``;
  const state =
    s.kind === 'answered'
      ? html`<dl class="facts"><dt>Answer</dt><dd><strong>${s.answer.choice}</strong></dd><dt>By</dt><dd>${s.answer.by}</dd><dt>Through</dt><dd>${s.answer.via}</dd><dt>At</dt><dd>${time(s.answer.at)}</dd></dl>`
      : s.kind === 'expired'
        ? html`<p class="muted">Expired at ${time(s.expires_at)} without an answer.</p>`
        : s.kind === 'open'
          ? html`<p class="muted">Not answered yet; open until ${time(s.expires_at)}.</p>`
          : html`<p class="muted">Its message has not left: the question opens when it does.</p>`;
  return html`<section class="card" aria-labelledby="question"><h2 id="question">Question</h2>
  <p>${s.question.prompt}</p>
  ${choiceList(s.question.choices)}
  ${state}
  </section>`;
}
