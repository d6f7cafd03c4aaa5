/**
 * The console's one stylesheet, served as /console/console.css (the CSP allows no inline
 * style). Light and dark follow the system; a table on a desktop reads as stacked cards on
 * a phone; focus is always visible.
 */
export const CONSOLE_CSS = `
:root { color-scheme: light dark; --bg: #f7f7f8; --fg: #17181c; --muted: #555a66; --card: #fff; --line: #d6d8de;
  --accent: #1f4fd1; --accent-fg: #fff; --ok: #17663a; --warn: #8a5300; --bad: #a3192e; --chip: #eceef2; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #121317; --fg: #eceef2; --muted: #a9aebb; --card: #1b1d23; --line: #343844;
    --accent: #8fb0ff; --accent-fg: #0b1020; --ok: #7fd6a0; --warn: #f0c070; --bad: #ff8d9c; --chip: #262933; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible, iframe:focus-visible {
  outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 8px; top: 8px; background: var(--card); padding: 8px; z-index: 2; }
header.top { background: var(--card); border-bottom: 1px solid var(--line); }
header.top .bar { max-width: 72rem; margin: 0 auto; padding: 8px 16px; display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; }
header.top .brand { font-weight: 700; margin-right: auto; }
nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: 4px 12px; margin: 0; padding: 0; }
nav a { display: inline-block; padding: 8px 4px; text-decoration: none; }
nav a[aria-current="page"] { text-decoration: underline; text-underline-offset: 6px; text-decoration-thickness: 3px; }
main { max-width: 72rem; margin: 0 auto; padding: 16px; }
h1 { font-size: 1.5rem; margin: 8px 0 16px; }
h2 { font-size: 1.15rem; margin: 24px 0 8px; }
/* A hash or an id is one long word: it wraps anywhere rather than widen the page on a phone. */
code, h1 { overflow-wrap: anywhere; }
/* Ids in a fixed-width face: every id is as wide as every other, so a list's columns do not move with the digits drawn. */
td.id { font-family: ui-monospace, 'DejaVu Sans Mono', monospace; font-size: .85rem; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 16px; margin: 0 0 16px; }
.card > h2:first-child { margin-top: 0; }
form.decision { margin-top: 16px; padding-top: 12px; border-top: 1px solid var(--line); }
form.decision label { margin-bottom: 4px; }
form.filters { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-end; }
form.filters input[name="client"] { width: 9rem; }
form.filters input[type="datetime-local"] { width: 13.5rem; }
label { display: flex; flex-direction: column; gap: 4px; font-size: .9rem; color: var(--muted); }
input, select, textarea { font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 8px; min-height: 44px; }
textarea { min-height: 4.5rem; width: 100%; }
button, .button { font: inherit; font-weight: 600; min-height: 44px; padding: 8px 16px; border-radius: 6px; border: 1px solid var(--accent);
  background: var(--accent); color: var(--accent-fg); cursor: pointer; text-decoration: none; display: inline-flex; align-items: center; }
button.secondary, .button.secondary { background: transparent; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); color: var(--card); }
.actions { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-top: 12px; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
th, td { text-align: left; padding: 10px 12px; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; overflow-wrap: normal; white-space: nowrap; }
td.num { overflow-wrap: normal; white-space: nowrap; }
.status { display: inline-block; padding: 2px 8px; border-radius: 999px; background: var(--chip); font-size: .85rem; font-weight: 600; white-space: nowrap; }
.status.sent, .status.delivered, .status.approved { color: var(--ok); }
.status.pending_approval, .status.queued, .status.unknown, .status.warning { color: var(--warn); }
.status.failed, .status.undelivered, .status.declined, .status.critical { color: var(--bad); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 6px 16px; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 12px; overflow: auto; max-height: 28rem; font-size: .85rem; white-space: pre-wrap; overflow-wrap: anywhere; }
iframe.mail { width: 100%; height: 24rem; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
.notice { border-left: 4px solid var(--accent); padding: 8px 12px; background: var(--card); margin: 0 0 16px; }
.notice.error { border-color: var(--bad); }
.empty { padding: 24px; text-align: center; color: var(--muted); background: var(--card); border: 1px dashed var(--line); border-radius: 8px; }
/* The answer page (a question's link): one column, a large button per choice. */
body.answer main { max-width: 36rem; }
body.answer time { white-space: nowrap; }
blockquote.prompt { margin: 0 0 16px; padding: 12px 16px; background: var(--card); border: 1px solid var(--line); border-radius: 8px; overflow-wrap: anywhere; }
.choices { display: flex; flex-direction: column; gap: 12px; margin-top: 16px; }
.choices form { margin: 0; }
.choices button { width: 100%; min-height: 56px; justify-content: center; font-size: 1.1rem; overflow-wrap: anywhere; }
@media (max-width: 640px) {
  table.rows thead { position: absolute; left: -999px; }
  table.rows, table.rows tbody, table.rows tr, table.rows td { display: block; width: 100%; }
  table.rows { border: 0; background: transparent; }
  table.rows tr { background: var(--card); border: 1px solid var(--line); border-radius: 8px; margin-bottom: 12px; padding: 4px 0; }
  table.rows td { border: 0; padding: 4px 12px; }
  table.rows td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .85rem; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: 8px; }
  form.filters { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 8px 12px; }
  form.filters label.wide { grid-column: 1 / -1; }
  form.filters input, form.filters select, form.filters input[name="client"], form.filters input[type="datetime-local"] { width: 100%; min-width: 0; }
  form.filters .button, form.filters button { justify-content: center; }
  header.top .bar { gap: 4px 12px; }
  nav ul { gap: 0 10px; }
  nav a { padding: 10px 0; }
  header.top form button { min-height: 36px; padding: 4px 10px; font-size: .9rem; }
}
`;
