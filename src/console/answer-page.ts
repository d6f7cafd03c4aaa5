/**
 * The answer page a question's link opens (DESIGN section 11): the question and one button
 * per choice, each its own POST form, through the console's escaping template and stylesheet
 * (no script). The same small page, with its HTTP status, says why an answer was not taken.
 * Public: whoever holds the link's token is the person asked; nothing here needs a session.
 */
import { html, type Html } from './html.js';
import { time } from './layout.js';

/** What the page shows; `status` is the HTTP status it is served with. */
export type AnswerView =
  | { kind: 'question'; prompt: string; via: string; choices: readonly string[]; expiresAt: number; action: string }
  | { kind: 'recorded'; prompt: string; choice: string; at: number }
  | { kind: 'answered'; prompt: string; choice: string; by: string; at: number }
  | { kind: 'refused'; title: string; text: string };

/** The page and its status. */
export function answerPage(view: AnswerView): { status: number; body: string } {
  switch (view.kind) {
    case 'question':
      return { status: 200, body: shell('Your answer', questionBody(view)) };
    case 'recorded':
      return {
        status: 200,
        body: shell(
          'Answer recorded',
          html`${promptOf(view.prompt)}<p class="notice" role="status">You answered <strong>${view.choice}</strong> at ${time(view.at)}. Thank you.</p>`,
        ),
      };
    case 'answered':
      return {
        status: 409,
        body: shell(
          'Already answered',
          html`${promptOf(view.prompt)}<p class="notice" role="status">This question was answered <strong>${view.choice}</strong> by ${view.by} at ${time(view.at)}; the first answer stands.</p>`,
        ),
      };
    case 'refused':
      return { status: 0, body: shell(view.title, html`<p class="notice error" role="alert">${view.text}</p>`) };
  }
}

const promptOf = (prompt: string): Html => html`<blockquote class="prompt">${prompt}</blockquote>`;

function questionBody(v: Extract<AnswerView, { kind: 'question' }>): Html {
  // One form per choice: each button posts its own choice, by keyboard or touch, without script.
  const buttons = v.choices.map(
    (choice) =>
      html`<form method="post" action="${v.action}"><input type="hidden" name="choice" value="${choice}"><button type="submit">${choice}</button></form>`,
  );
  return html`${promptOf(v.prompt)}
<p class="muted">Sent by ${v.via}. Choose one answer; the first answer given counts.</p>
<p class="muted">Open until ${time(v.expiresAt)}.</p>
<div class="choices" role="group" aria-label="Answers">${buttons}</div>`;
}

function shell(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<meta name="robots" content="noindex">
<title>${title} · notify-mcp</title>
<link rel="stylesheet" href="/console/console.css">
</head>
<body class="answer">
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.text;
}
