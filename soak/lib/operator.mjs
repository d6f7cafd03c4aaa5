/**
 * The soak's operator (issue 35): a person at the console deciding held sends, as a script
 * drives it (docs/console.md: `Authorization: Bearer <operator token>`, no CSRF then).
 *
 * Each held send the load reports waits a "think" time, then the operator reads its exact
 * payload (`/console/notifications/<id>/payload.json`) from one replica or the other,
 * computes its SHA-256 as the server does (SHA-256 of the canonical JSON: what the page
 * shows as "Payload sha256"), reads which version of the text it holds (the `soakv<n>`
 * marker), and POSTs the decision with that hash to `/console/approvals/<id>`, on either
 * replica. A decision refused because the payload changed meanwhile (an edit landed) is
 * made again on a fresh read, up to a few times. Some held sends are left undecided, to
 * expire. When the load asked for it, the agent's edit is fired at the moment of the
 * decision (from 0.2 s before to 0.5 s after the POST), so edits race decisions and the
 * approved sends' releases; an approved send that such an edit put back to
 * `pending_approval` is, for half of them, decided again (approved on a fresh read). Some
 * are edited instead right after their approval is accepted (0-0.3 s): an approved send not
 * yet released, or one leaving.
 *
 * Every read and decision is recorded (`kind: 'decision'`): what was decided on which
 * version and hash, when, and how the console answered. Meanwhile it loads the approvals
 * page of each replica every 2 s (which is also what expires held sends past their TTL).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../dist/store/audit.js';
import { bearer, OPERATOR } from './load.mjs';
import { versionInMime } from './fakes.mjs';

/** Decisions in flight at once: a decision waits for its release (the provider call), so a few workers would fall behind the TTL. */
const IN_FLIGHT = 25;
const MAX_TRIES = 8;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const consoleBase = (mcpUrl) => mcpUrl.replace(/\/mcp$/, '');

/** Every string in a payload, joined: where the version marker is (an email's is inside its MIME). */
function strings(value, out = []) {
  if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

async function http(url, init = {}) {
  const t0 = Date.now();
  try {
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { Authorization: `Bearer ${bearer(OPERATOR)}`, ...(init.headers ?? {}) }, signal: AbortSignal.timeout(60_000) });
    return { status: res.status, location: res.headers.get('location') ?? undefined, text: await res.text(), ms: Date.now() - t0 };
  } catch (err) {
    return { status: 0, error: err.cause?.code ?? err.name, text: '', ms: Date.now() - t0 };
  }
}

/** The console's answer to a decision, classified. */
function outcomeOf(res) {
  if (res.status === 303 && res.location?.startsWith('/console/approvals?done=')) {
    const said = new URLSearchParams(res.location.split('?')[1]).get('done') ?? '';
    return { outcome: 'accepted', said };
  }
  if (res.status === 0) return { outcome: 'retry', said: `no answer (${res.error})` };
  const text = res.text.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
  const said = (/(Notification \S+ [^.]*\.|The message you were shown[^.]*\.[^.]*\.|[^.]*store[^.]*\.)/i.exec(text)?.[1] ?? text.slice(0, 200)).trim();
  if (/is not the one held/.test(text)) return { outcome: 'stale', said };
  if (/cannot be decided|decided by someone else/.test(text)) return { outcome: 'refused', said };
  if (/expired at/.test(text)) return { outcome: 'expired', said };
  if (/opted out/.test(text)) return { outcome: 'refused', said };
  if (res.status >= 500 && res.status !== 503) return { outcome: 'server_error', said: `HTTP ${res.status}: ${said}` };
  // A store fault, a rate limit: the same decision again.
  return { outcome: 'retry', said: `HTTP ${res.status}: ${said}` };
}

export function startOperator({ record, seed = 1 }) {
  const queue = [];
  let accepting = true;
  let busy = 0;
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pages = { loads: 0, by_status: {} };
  const urls = new Set();

  async function decideOne(item, choice, round) {
    for (let attempt = 1; attempt <= MAX_TRIES; attempt++) {
      const base = consoleBase(item.urls[Math.floor(rand() * item.urls.length)]);
      const readAt = Date.now();
      const read = await http(`${base}/console/notifications/${encodeURIComponent(item.id)}/payload.json`);
      if (read.status !== 200) {
        record({ kind: 'decision', id: item.id, token: item.token, via: item.via, decision: choice, round, attempt, readAt, outcome: read.status >= 500 && read.status !== 503 ? 'server_error' : 'retry', said: `payload read: HTTP ${read.status || read.error}` });
        await sleep(500);
        continue;
      }
      const payload = JSON.parse(read.text);
      const sha = createHash('sha256').update(canonicalJson(payload)).digest('hex');
      const version = versionInMime(strings(payload).join('\n'));
      // The agent's edit at the moment of the decision: fired now, the POST waits out a negative offset.
      let race;
      if (item.raceEdit && !item.raced) {
        item.raced = true;
        const to = item.urls[Math.floor(rand() * item.urls.length)];
        if (item.raceOffsetMs <= 0) race = item.edit(to);
        else race = sleep(item.raceOffsetMs).then(() => item.edit(to));
        if (item.raceOffsetMs < 0) await sleep(-item.raceOffsetMs);
      }
      const postAt = Date.now();
      const form = new URLSearchParams({ decision: choice, payload_sha256: sha, reason: `soak ${choice}` });
      const res = await http(`${base}/console/approvals/${encodeURIComponent(item.id)}`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: form.toString() });
      const { outcome, said } = outcomeOf(res);
      // The agent's edit right after an approval: the approved send not yet released (or just leaving).
      if (outcome === 'accepted' && choice === 'approve' && item.lateEdit && !item.raced) {
        item.raced = true;
        const to = item.urls[Math.floor(rand() * item.urls.length)];
        race = sleep(rand() * 300).then(() => item.edit(to));
      }
      const d = { kind: 'decision', id: item.id, token: item.token, via: item.via, decision: choice, round, attempt, version, sha, readAt, postAt, doneAt: Date.now(), http: res.status, outcome, said, server: base };
      record(d);
      if (outcome === 'stale' || outcome === 'retry') {
        if (outcome === 'retry') await sleep(500);
        continue;
      }
      return { decision: d, race };
    }
    return { decision: undefined };
  }

  async function handle(item) {
    if (item.choice === 'skip') {
      record({ kind: 'decision', id: item.id, token: item.token, via: item.via, decision: 'skip', round: 1, outcome: 'skipped' });
      return;
    }
    const { decision, race } = await decideOne(item, item.choice, 1);
    // An edit that put an approved send back to pending_approval: decided again, for half of them.
    if (decision?.outcome === 'accepted' && decision.decision === 'approve' && race && item.reround) {
      const edited = await race.catch(() => undefined);
      if (edited?.code === 'OK' && edited.structured?.status === 'pending_approval') {
        await sleep(200 + rand() * 800);
        await decideOne(item, 'approve', 2);
      }
    }
  }

  const running = new Set();
  const dispatcher = (async () => {
    for (;;) {
      const now = Date.now();
      const i = running.size < IN_FLIGHT ? queue.findIndex((q) => q.readyAt <= now) : -1;
      if (i < 0) {
        if (!accepting && queue.length === 0) return Promise.all(running);
        await sleep(50);
        continue;
      }
      const [item] = queue.splice(i, 1);
      busy++;
      const p = handle(item).finally(() => {
        busy--;
        running.delete(p);
      });
      running.add(p);
    }
  })();

  let pager;
  const pageLoop = async () => {
    while (accepting || queue.length || busy) {
      for (const u of urls) {
        const res = await http(`${consoleBase(u)}/console/approvals`);
        pages.loads++;
        pages.by_status[res.status || res.error] = (pages.by_status[res.status || res.error] ?? 0) + 1;
      }
      await sleep(2_000);
    }
  };

  return {
    enqueue(item) {
      for (const u of item.urls) urls.add(u);
      pager ??= pageLoop();
      queue.push({ ...item, readyAt: Date.now() + item.thinkMs });
    },
    /** No more held sends come; resolves once every one queued has been decided (or given up). */
    async finish() {
      accepting = false;
      await dispatcher;
      await pager;
    },
    /** Loads the approvals page of each server once: it expires held sends past their TTL. */
    async expire(serverUrls) {
      for (const u of serverUrls) {
        const res = await http(`${consoleBase(u)}/console/approvals`);
        pages.loads++;
        pages.by_status[res.status || res.error] = (pages.by_status[res.status || res.error] ?? 0) + 1;
      }
    },
    pages,
  };
}
