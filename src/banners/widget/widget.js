/*
 * notify-mcp banner widget: <script src="https://notify.example/widget.js" data-audience="all,admins"></script>
 * Shows the active banners of those segments, live from GET /banners/stream (Server-Sent
 * Events), in a shadow root so the host page's CSS cannot reach it. Plain ES2020, no
 * dependencies; served as it is by notify-mcp (src/banners/widget/assets.ts).
 *
 * Options (attributes of the script tag):
 *   data-audience    segments the viewer belongs to, comma-separated (default "all")
 *   data-target      CSS selector of the element to render into (default: top of <body>)
 *   data-max-visible banners shown before "Show N more" (default 3)
 *   data-theme       light | dark (default: the viewer's prefers-color-scheme)
 *   data-token       read-only feed token, when the server sets NOTIFY_READ_AUTH=1
 *   data-label       accessible name of the banner region (default "Announcements")
 * The <notify-banners> element it adds carries data-state="live" once the first snapshot
 * arrived, "retrying" while it waits to reconnect.
 */
(() => {
  'use strict';
  const script = document.currentScript;
  if (!script || typeof EventSource !== 'function') return;
  const opt = (name, fallback) => script.getAttribute('data-' + name) || fallback;
  const audience = opt('audience', 'all');
  const maxVisible = Math.max(1, parseInt(opt('max-visible', '3'), 10) || 3);
  // Relative to the script's own URL, so that a page on another origin (or a server under a
  // path prefix) reaches the server that served this file.
  const streamUrl = new URL('banners/stream', script.src);
  streamUrl.searchParams.set('audience', audience);
  const token = opt('token', '');
  if (token) streamUrl.searchParams.set('access_token', token);

  const RANK = { critical: 0, warning: 1, info: 2 };
  const LABEL = { critical: 'Critical', warning: 'Warning', info: 'Info' };
  const STORE_KEY = 'notify-mcp:dismissed';
  const KEEP_MS = 90 * 86400000; // a banner lives at most 90 days, so older dismissals are moot

  /* The viewer's own dismissals: banner id -> when, in localStorage (this browser only). */
  let memory = {};
  const readDismissed = () => {
    try {
      const parsed = JSON.parse(localStorage.getItem(STORE_KEY) || '{}');
      return parsed && typeof parsed === 'object' ? parsed : {};
    } catch {
      return memory; // storage blocked (sandboxed frame, privacy mode): this page view only
    }
  };
  const rememberDismissal = (id) => {
    const all = readDismissed();
    const now = Date.now();
    for (const k of Object.keys(all)) if (!(now - all[k] < KEEP_MS)) delete all[k];
    all[id] = now;
    memory = all;
    try {
      localStorage.setItem(STORE_KEY, JSON.stringify(all));
    } catch {
      /* kept in memory */
    }
  };

  const CSS = `
:host{all:initial;display:block}
:host([hidden]){display:none}
[hidden]{display:none!important}
section{font:14px/1.45 system-ui,sans-serif;--fg:#1a1a1a;--info-bg:#e8f0fe;--info-bd:#1a56c4;--warn-bg:#fff4d6;--warn-bd:#8a5a00;--crit-bg:#fde7e7;--crit-bd:#b3141f;--btn-hover:rgba(0,0,0,.08);color:var(--fg)}
section.dark{--fg:#f0f0f0;--info-bg:#16253d;--info-bd:#8ab4f8;--warn-bg:#3a2c05;--warn-bd:#f5c451;--crit-bg:#45171a;--crit-bd:#ff8a8f;--btn-hover:rgba(255,255,255,.12)}
div.open{max-height:50vh;overflow-y:auto}
.banner{display:flex;align-items:flex-start;gap:10px;padding:8px 8px 8px 12px;border-left:4px solid var(--bd);background:var(--bg);border-bottom:1px solid rgba(127,127,127,.25)}
.info{--bg:var(--info-bg);--bd:var(--info-bd)}
.warning{--bg:var(--warn-bg);--bd:var(--warn-bd)}
.critical{--bg:var(--crit-bg);--bd:var(--crit-bd);font-weight:600}
.tag{flex:none;font-size:12px;font-weight:700;text-transform:uppercase;letter-spacing:.04em;color:var(--fg);border:1px solid var(--bd);border-radius:3px;padding:0 5px;margin-top:1px}
.text{flex:1;min-width:0;overflow-wrap:anywhere;white-space:pre-wrap;padding-top:1px}
button{font:inherit;color:var(--fg);background:transparent;border:1px solid transparent;border-radius:4px;cursor:pointer}
button:hover{background:var(--btn-hover)}
button:focus-visible{outline:2px solid var(--fg);outline-offset:1px}
.x{flex:none;width:28px;height:28px;font-size:18px;line-height:1;padding:0}
.more{display:block;width:100%;text-align:left;padding:6px 12px;font-weight:600;background:var(--info-bg);border-radius:0}
.banner.enter{animation:in .2s ease-out}
@keyframes in{from{opacity:0;transform:translateY(-4px)}}
@media (prefers-reduced-motion:reduce){.banner.enter{animation:none}}`;

  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text) node.textContent = text; // banner text is text, never markup
    return node;
  };

  const host = el('notify-banners');
  const root = host.attachShadow({ mode: 'open' });
  const section = el('section');
  section.setAttribute('aria-label', opt('label', 'Announcements'));
  const list = el('div');
  list.id = 'notify-list';
  const more = el('button', 'more');
  more.type = 'button';
  more.hidden = true;
  more.setAttribute('aria-controls', list.id);
  const style = el('style');
  style.textContent = CSS;
  section.append(list, more);
  root.append(style, section);

  const theme = opt('theme', '');
  const scheme = window.matchMedia ? matchMedia('(prefers-color-scheme: dark)') : null;
  const applyTheme = () => section.classList.toggle('dark', theme ? theme === 'dark' : !!(scheme && scheme.matches));
  applyTheme();
  if (scheme && scheme.addEventListener) scheme.addEventListener('change', applyTheme);

  /* State: the banners the server says are active; a snapshot replaces it whole. */
  let banners = new Map();
  const items = new Map(); // banner id -> its element
  let expanded = false;
  let expiryTimer = 0;

  const visible = () => {
    const dismissed = readDismissed();
    const now = Date.now();
    return [...banners.values()]
      .filter((b) => !dismissed[b.banner_id] && !(b.expires_at && Date.parse(b.expires_at) <= now))
      .sort((a, b) => (RANK[a.severity] ?? 2) - (RANK[b.severity] ?? 2) || String(b.created_at).localeCompare(String(a.created_at)));
  };

  const dismiss = (id) => {
    const row = items.get(id);
    const focused = row && row.contains(root.activeElement);
    const at = [...list.children].indexOf(row);
    rememberDismissal(id);
    render();
    if (focused) {
      // Keep keyboard users in place: the row that took its place (or the one above), else the toggle.
      const rows = list.querySelectorAll('.banner:not([hidden])');
      const next = rows[Math.min(at, rows.length - 1)];
      if (next) next.querySelector('.x').focus();
      else if (!more.hidden) more.focus();
    }
  };

  const item = (b) => {
    const sev = LABEL[b.severity] ? b.severity : 'info';
    const row = el('div', 'banner ' + sev + ' enter');
    // Critical interrupts (alert); info and warning are announced politely (status).
    row.setAttribute('role', sev === 'critical' ? 'alert' : 'status');
    row.dataset.id = b.banner_id;
    row.dataset.severity = sev;
    const x = el('button', 'x', '\u00d7');
    x.type = 'button';
    x.setAttribute('aria-label', 'Dismiss ' + LABEL[sev].toLowerCase() + ' banner: ' + clip(b.text));
    x.addEventListener('click', () => dismiss(b.banner_id));
    row.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        dismiss(b.banner_id);
      }
    });
    row.append(el('span', 'tag', LABEL[sev]), el('span', 'text', b.text), x);
    row.addEventListener('animationend', () => row.classList.remove('enter'), { once: true });
    return row;
  };
  const clip = (text) => (text.length > 80 ? text.slice(0, 79) + '\u2026' : text);

  function render() {
    const shown = visible();
    const keep = new Set(shown.map((b) => b.banner_id));
    for (const [id, row] of items) {
      if (!keep.has(id)) {
        row.remove();
        items.delete(id);
      }
    }
    shown.forEach((b, i) => {
      let row = items.get(b.banner_id);
      if (!row) items.set(b.banner_id, (row = item(b)));
      if (list.children[i] !== row) list.insertBefore(row, list.children[i] || null);
      row.hidden = !expanded && i >= maxVisible;
    });
    const extra = shown.length - maxVisible;
    more.hidden = extra <= 0;
    if (extra <= 0) expanded = false;
    more.textContent = extra <= 0 ? '' : expanded ? 'Show fewer' : 'Show ' + extra + ' more';
    more.setAttribute('aria-expanded', String(expanded));
    list.classList.toggle('open', expanded);
    // Inside the shadow root too: a host page rule on notify-banners can override :host([hidden]).
    host.hidden = section.hidden = shown.length === 0;
    scheduleExpiry();
  }

  more.addEventListener('click', () => {
    expanded = !expanded;
    render();
  });

  // A banner past its expires_at leaves on time even while the stream is down.
  function scheduleExpiry() {
    clearTimeout(expiryTimer);
    let next = Infinity;
    for (const b of banners.values()) {
      const at = b.expires_at ? Date.parse(b.expires_at) : Infinity;
      if (at > Date.now() && at < next) next = at;
    }
    if (next !== Infinity) expiryTimer = setTimeout(render, Math.min(next - Date.now() + 50, 2147483647));
  }

  // Another tab of this viewer dismissed one.
  addEventListener('storage', (e) => {
    if (e.key === STORE_KEY) render();
  });

  /* The stream. EventSource resumes by itself (Last-Event-ID) after a dropped connection;
     when it gives up (an HTTP error) or keeps failing, we retry with a growing delay. */
  let source = null;
  let failures = 0;
  let retryTimer = 0;
  const parse = (e) => {
    try {
      return JSON.parse(e.data);
    } catch {
      return null;
    }
  };

  let lastId = '';
  function connect() {
    // A new EventSource cannot send Last-Event-ID: the cursor goes in the query instead.
    const url = new URL(streamUrl);
    if (lastId) url.searchParams.set('last_event_id', lastId);
    source = new EventSource(url.href);
    source.addEventListener('open', () => {
      failures = 0;
      if (lastId) host.dataset.state = 'live'; // resumed: the missed changes follow, or a snapshot
    });
    source.addEventListener('snapshot', (e) => {
      lastId = e.lastEventId;
      const data = parse(e);
      if (!data || !Array.isArray(data.banners)) return;
      banners = new Map(data.banners.map((b) => [b.banner_id, b]));
      host.dataset.state = 'live';
      render();
    });
    source.addEventListener('banner', (e) => {
      lastId = e.lastEventId;
      const data = parse(e);
      const b = data && data.banner;
      if (!b || !b.banner_id) return;
      if (data.change === 'shown') banners.set(b.banner_id, b);
      else banners.delete(b.banner_id);
      render();
    });
    source.addEventListener('error', () => {
      // One drop is the browser's to resume; a second failure before reopening, or a closed
      // stream (401, 503 over the cap, server gone), is ours: back off up to a minute.
      failures++;
      if (source.readyState === EventSource.CONNECTING && failures === 1) return;
      source.close();
      host.dataset.state = 'retrying';
      const delay = Math.min(60000, 1000 * 2 ** Math.min(failures, 6)) * (0.5 + Math.random() / 2);
      clearTimeout(retryTimer);
      retryTimer = setTimeout(connect, delay);
    });
  }

  const mount = () => {
    const target = opt('target', '') && document.querySelector(opt('target', ''));
    if (target) target.append(host);
    else document.body.prepend(host);
    host.hidden = true;
    connect();
  };
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount, { once: true });
})();
