/** The page shell every console view shares: landmarks, navigation, the sign-out form. */
import { html, type Html } from './html.js';

export type Section = 'notifications' | 'approvals' | 'waiting' | 'questions' | 'banners' | 'login';

export interface Shell {
  title: string;
  section: Section;
  /** The signed-in operator, the session's CSRF token and the sections withheld from it; absent on the login page. */
  session?: { client: string; csrf: string; withheld?: readonly Section[] };
  notice?: { kind: 'info' | 'error'; text: string };
  body: Html;
}

const NAV: { section: Section; href: string; label: string }[] = [
  { section: 'notifications', href: '/console', label: 'Notifications' },
  { section: 'approvals', href: '/console/approvals', label: 'Approvals' },
  { section: 'waiting', href: '/console/waiting', label: 'Scheduled' },
  { section: 'questions', href: '/console/questions', label: 'Questions' },
  { section: 'banners', href: '/console/banners', label: 'Banners' },
];

export function page(shell: Shell): string {
  const nav = shell.session
    ? html`<nav aria-label="Console">
        <ul>
          ${NAV.filter((n) => !shell.session!.withheld?.includes(n.section)).map((n) => html`<li><a href="${n.href}"${n.section === shell.section ? html` aria-current="page"` : ''}>${n.label}</a></li>`)}
        </ul>
      </nav>
      <form method="post" action="/console/logout">
        <input type="hidden" name="csrf" value="${shell.session.csrf}">
        <button type="submit" class="secondary">Sign out ${shell.session.client}</button>
      </form>`
    : '';
  const notice = shell.notice
    ? html`<div class="notice${shell.notice.kind === 'error' ? ' error' : ''}" role="${shell.notice.kind === 'error' ? 'alert' : 'status'}">${shell.notice.text}</div>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${shell.title} · notify-mcp console</title>
<link rel="stylesheet" href="/console/console.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="bar"><span class="brand">notify-mcp console</span>${nav}</div></header>
<main id="main">
<h1>${shell.title}</h1>
${notice}
${shell.body}
</main>
</body>
</html>
`.text;
}

/** A form's CSRF field. */
export const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}">`;

/** A time as people read it, in UTC, with the machine-readable value. */
export function time(ms: number | null | undefined): Html {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return html`<span class="muted">—</span>`;
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')} UTC</time>`;
}

export const statusChip = (status: string) => html`<span class="status ${status}">${status.replace('_', ' ')}</span>`;
