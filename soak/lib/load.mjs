/**
 * The load: N concurrent clients speaking MCP 2026-07-28 over HTTP (stateless JSON-RPC, as
 * a conforming client sends it), each looping over a mix of live sends and banner calls
 * until the deadline. Every answer is classified: a result, a coded tool error, a JSON-RPC
 * error, an HTTP status, or no answer at all (a transport failure, which breaks the run).
 */
import { versionInMime } from './fakes.mjs';

const MODERN = '2026-07-28';
const CLIENT_TIMEOUT_MS = 60_000;

/**
 * Every /mcp request carries a bearer token (NOTIFY_HTTP_TOKENS), since the console needs an
 * operator token: client `soak-<i>` has its own, and `ops` is the operator (NOTIFY_OPERATOR_CLIENTS).
 */
export const OPERATOR = 'ops';
export const bearer = (client) => `soaktok-${client}-0123456789abcdef`;
export function httpTokens(clients) {
  return [...Array.from({ length: clients }, (_, i) => `soak-${i}`), OPERATOR].map((c) => `${c}:${bearer(c)}`).join(',');
}

/** One call; resolves to { ms, code, status?, structured? } and never throws. */
export async function callTool(url, name, args, client) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: client, version: '1' },
      },
    },
  });
  const t0 = performance.now();
  const out = (code, extra = {}) => ({ ms: performance.now() - t0, code, ...extra });
  let res;
  let text;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': MODERN,
        'Mcp-Method': 'tools/call',
        'Mcp-Name': name,
        Authorization: `Bearer ${bearer(client)}`,
      },
      body,
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    text = await res.text();
  } catch (err) {
    return out(`NO_ANSWER:${err.cause?.code ?? err.name}`, { broken: true });
  }
  if (res.status !== 200) return out(`HTTP_${res.status}`, { broken: res.status >= 500 });
  let msg;
  try {
    const json = (res.headers.get('content-type') ?? '').includes('event-stream')
      ? text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => JSON.parse(l.slice(5)))
          .find((m) => 'result' in m || 'error' in m)
      : JSON.parse(text);
    msg = json;
  } catch {
    return out('UNPARSEABLE', { broken: true });
  }
  if (!msg) return out('NO_RESULT', { broken: true });
  if (msg.error) return out(`RPC_${msg.error.code}`, { broken: true });
  const r = msg.result;
  const sc = r?.structuredContent;
  if (r?.isError) {
    const code = sc?.error?.code;
    return code ? out(code, { structured: sc }) : out('UNCODED_ERROR', { broken: true });
  }
  return out('OK', { structured: sc });
}

const EMAILS = ['ops@example.com', 'oncall@example.com', 'a.b@example.com'];
// C0OTHER01 is not on the allowlist: refused, and must never reach the fake.
const SLACK_CHANNELS = ['C0SOAK001', '#ops-alerts', '#ops-alerts', 'C0OTHER01'];

function pick(rand, list) {
  return list[Math.floor(rand() * list.length)];
}

/** A small seeded PRNG (mulberry32), so a run's mix is reproducible. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The text of version `v` of a message (0: as sent; n: its n-th edit), carrying the soak
 * token and the version marker the fakes read (`soakv<n>`). For email it is `body_html`.
 */
function textOf(via, token, v, held) {
  if (via === 'email') return `<p>Soak ${held ? 'held ' : ''}message <b>${token}</b> soakv${v}</p>`;
  if (via === 'sms') return `soak ${token} ok soakv${v}`;
  // A held Slack post keeps its broadcast mention through every edit (the rule that holds it).
  return held ? `soak ${token} <!here> soakv${v}` : `soak ${token} done soakv${v}`;
}

function sendArgs(rand, token) {
  const r = rand();
  if (r < 0.36) {
    const to = rand() < 0.3 ? [pick(rand, EMAILS), pick(rand, EMAILS)] : pick(rand, EMAILS);
    return { via: 'email', to, subject: `soak ${token}`, body_html: textOf('email', token, 0) };
  }
  if (r < 0.68) {
    return { via: 'sms', to: `+1415555${String(Math.floor(rand() * 10_000)).padStart(4, '0')}`, body: textOf('sms', token, 0) };
  }
  // No broadcast mention: with NOTIFY_APPROVAL=broadcast a mention holds the send for a person (heldArgs).
  return { via: 'slack', channel: pick(rand, SLACK_CHANNELS), text: textOf('slack', token, 0) };
}

/**
 * A send the approval rules hold (NOTIFY_APPROVAL=recipients>2,broadcast): an email to the
 * three addresses, or a Slack post with `<!here>` (NOTIFY_SLACK_ALLOW_BROADCAST=1).
 */
function heldArgs(rand, token) {
  if (rand() < 0.55) return { via: 'email', to: [...EMAILS], subject: `soak ${token}`, body_html: textOf('email', token, 0, true) };
  return { via: 'slack', channel: pick(rand, ['C0SOAK001', '#ops-alerts']), text: textOf('slack', token, 0, true) };
}

/** The edit_notification arguments giving version `v` of a message. */
function editArgs(id, via, token, v, held) {
  return { id, text: textOf(via, token, v, held) };
}

/**
 * Scheduled sends (issue 24): this share of the sends carries `send_at` 2-8 s ahead, so
 * through a run they fall due under every fault in turn; this share of those is retracted,
 * half at a moment before the due time, half within RACE_MS of it either side, so some
 * retracts come well before the release, some race it, and some come after it.
 */
export const SCHEDULE_SHARE = 0.15;
export const RETRACT_SHARE = 0.4;
/**
 * Held sends (issue 35): this share of the sends is one the approval rules hold for the
 * console; of those, this share is edited by its agent 0-2 s after it was held (while the
 * operator looks at it), this share edited at the moment the operator decides (from 0.2 s
 * before to 0.5 s after: an edit racing the decision, the approval's release, or both), and
 * the operator declines this share and leaves this share undecided (to expire). The rest it
 * approves.
 */
export const HELD_SHARE = 0.08;
export const HELD_EDIT_SHARE = 0.35;
export const HELD_RACE_SHARE = 0.4;
/** Of those not edited at the decision, this share is edited right after its approval stood (0-0.3 s). */
export const HELD_LATE_EDIT_SHARE = 0.4;
export const HELD_DECLINE_SHARE = 0.15;
export const HELD_SKIP_SHARE = 0.08;
/** Of the scheduled sends not retracted, this share is edited (edit_notification), half racing the release. */
export const SCHEDULED_EDIT_SHARE = 0.3;
/**
 * Escalations (issue 39): this share of the sends names a policy (`escalate`, NOTIFY_ESCALATIONS
 * below: steps 2-6 s after the first send, each channel once per policy, so a fake's channel
 * names the step). Of those, this share asks its own choices (the others an acknowledgement),
 * and each is answered by POSTing a delivered link to either replica: never (ANSWER_NONE),
 * before the first step is due, within RACE_MS of a step's due time (racing its release), or
 * after the last; this share of the answered gets a second answer, half at the same moment on
 * the other replica (racing the first), half up to 2 s later.
 */
export const ESCALATE_SHARE = 0.06;
export const ESCALATE_CHOICES_SHARE = 0.4;
export const ANSWER_NONE = 0.2;
export const ANSWER_EARLY = 0.25;
export const ANSWER_RACE = 0.35;
export const SECOND_ANSWER_SHARE = 0.35;
export const ESCALATIONS = {
  page: [['slack', '#ops-alerts', 2_000], ['sms', '+14155550177', 4_000], ['email', 'lead@example.com', 6_000]],
  mail: [['email', 'oncall@example.com', 3_000], ['slack', 'C0SOAK001', 5_000]],
  text: [['sms', '+14155550178', 2_000], ['email', 'lead@example.com', 5_000]],
};
/** NOTIFY_ESCALATIONS for ESCALATIONS. */
export const escalationsEnv = () =>
  Object.entries(ESCALATIONS)
    .map(([name, steps]) => `${name}=${steps.map(([via, to, ms]) => `${via}:${to}@${ms / 1000}s`).join(',')}`)
    .join(';');
const CHOICES = ['ack', 'defer', 'resolve'];
/** How long an answer waits for a link to be delivered (an SMS first send has none: its first email or Slack step brings one). */
const LINK_WAIT_MS = 12_000;
const SEND_AT_MIN_MS = 2_000;
const SEND_AT_SPREAD_MS = 6_000;
const RACE_MS = 750;

/**
 * Runs the clients until `deadline` (epoch ms). `urls` are the servers' /mcp endpoints;
 * client i uses urls[i % n], and a concurrent duplicate goes to the next one (another
 * replica when there are two). Resolves once the retracts still timed after the deadline
 * have been answered too.
 */
export async function runLoad({ urls, clients, deadline, seed, record, operator, links }) {
  const retracts = [];
  /** Answers to escalations, still timed after the deadline, awaited with the retracts. */
  const answering = [];
  /** Edits still timed after the deadline, awaited with the retracts. */
  const edits = [];
  /**
   * Edits of one notification, one after the other (so version n is the n-th to reach the
   * store), each carrying its version marker; resolves to the edit's answer.
   */
  const editorOf = ({ id, via, token, client, held }) => {
    let chain = Promise.resolve();
    let n = 0;
    return (to) => {
      const version = ++n;
      const p = chain.then(async () => {
        const start = Date.now();
        const o = await callTool(to, 'edit_notification', editArgs(id, via, token, version, held), client);
        record({ kind: 'edit', target: held ? 'held' : 'scheduled', via, token, id, version, start, end: Date.now(), ...o });
        return o;
      });
      chain = p.catch(() => {});
      edits.push(p);
      return p;
    };
  };
  const loops = Array.from({ length: clients }, async (_, id) => {
    const rand = prng(seed + id * 7919);
    const home = urls[id % urls.length];
    const other = urls[(id + 1) % urls.length];
    const name = `soak-${id}`;
    const banners = [];
    let seq = 0;
    while (Date.now() < deadline) {
      seq++;
      const r = rand();
      if (r < 0.2) {
        // Banner calls: show (some deduped), list, dismiss one shown earlier.
        const b = rand();
        if (b < 0.5) {
          const args = { text: `soak banner ${id}.${seq}`, audience: rand() < 0.5 ? 'all' : `team:soak${id % 5}`, severity: pick(rand, ['info', 'warning', 'critical']) };
          if (rand() < 0.3) args.dedupe_key = `d${id % 10}`;
          const o = await callTool(home, 'show_banner', args, name);
          if (o.code === 'OK' && o.structured?.banner_id) banners.push(o.structured.banner_id);
          record({ kind: 'show_banner', ...o });
        } else if (b < 0.8 || banners.length === 0) {
          record({ kind: 'list_banners', ...(await callTool(home, 'list_banners', { audience: 'all' }, name)) });
        } else {
          record({ kind: 'dismiss_banner', ...(await callTool(home, 'dismiss_banner', { banner_id: banners.shift() }, name)) });
        }
        continue;
      }
      const token = `sk${id.toString(36)}x${seq.toString(36)}`;
      if (operator && rand() < HELD_SHARE) {
        // A send the approval rules hold for the console: the operator decides it (operator.mjs),
        // and this agent edits some of them, before the decision or racing it and the release.
        const args = heldArgs(rand, token);
        const o = await callTool(home, 'send_notification', args, name);
        record({ kind: 'held', via: args.via, token, client: name, url: home, ...o });
        if (o.code === 'OK' && o.structured?.status === 'pending_approval') {
          const nid = o.structured.id;
          const edit = editorOf({ id: nid, via: args.via, token, client: name, held: true });
          const editEarly = rand() < HELD_EDIT_SHARE;
          const earlyDelay = rand() * 2_000;
          const earlyTo = rand() < 0.5 ? home : other;
          if (editEarly) setTimeout(() => edit(earlyTo), earlyDelay);
          const c = rand();
          operator.enqueue({
            id: nid,
            token,
            via: args.via,
            client: name,
            urls: [home, other],
            edit,
            choice: c < HELD_SKIP_SHARE ? 'skip' : c < HELD_SKIP_SHARE + HELD_DECLINE_SHARE ? 'decline' : 'approve',
            thinkMs: 300 + rand() * 2_200,
            raceEdit: rand() < HELD_RACE_SHARE,
            lateEdit: rand() < HELD_LATE_EDIT_SHARE,
            raceOffsetMs: rand() * 700 - 200,
            reround: rand() < 0.5,
          });
        }
        continue;
      }
      if (links && rand() < ESCALATE_SHARE) {
        answering.push(...(await escalate({ rand, token, name, home, other, record, links })));
        continue;
      }
      const args = sendArgs(rand, token);
      const scheduled = rand() < SCHEDULE_SHARE;
      if (scheduled) args.send_at = new Date(Date.now() + SEND_AT_MIN_MS + rand() * SEND_AT_SPREAD_MS).toISOString();
      const kind = scheduled ? 'schedule' : 'send';
      const keyed = rand() < 0.2;
      if (keyed) args.idempotency_key = `key-${token}`;
      let answers;
      if (keyed && rand() < 0.5) {
        // A deliberate concurrent duplicate: the same key and payload, at once, to two servers.
        answers = await Promise.all([callTool(home, 'send_notification', args, name), callTool(other, 'send_notification', args, name)]);
        for (const a of answers) record({ kind, via: args.via, token, keyed: true, duplicate: true, client: name, url: home, ...a });
      } else {
        answers = [await callTool(home, 'send_notification', args, name)];
        record({ kind, via: args.via, token, keyed, client: name, url: home, ...answers[0] });
      }
      const waiting = answers.find((a) => a.code === 'OK' && a.structured?.status === 'scheduled');
      const retract = waiting && rand() < RETRACT_SHARE;
      if (waiting && !retract && operator && rand() < SCHEDULED_EDIT_SHARE) {
        // An edit of a scheduled send, half well before its due time, half racing its release.
        const nid = waiting.structured.id;
        const untilDue = Date.parse(waiting.structured.send_at) - Date.now();
        const delay = Math.max(0, rand() < 0.5 ? rand() * untilDue : untilDue + (rand() * 2 - 1) * RACE_MS);
        const to = rand() < 0.5 ? home : other;
        const edit = editorOf({ id: nid, via: args.via, token, client: name, held: false });
        edits.push(new Promise((r) => setTimeout(r, delay)).then(() => edit(to)));
      }
      if (retract) {
        const nid = waiting.structured.id;
        const due = Date.parse(waiting.structured.send_at);
        const untilDue = due - Date.now();
        const delay = Math.max(0, rand() < 0.5 ? rand() * untilDue : untilDue + (rand() * 2 - 1) * RACE_MS);
        // Half of them to the other replica, so a retract on one races the release on the other.
        const to = rand() < 0.5 ? home : other;
        retracts.push(
          new Promise((r) => setTimeout(r, delay)).then(async () => {
            const sentAt = Date.now();
            record({ kind: 'retract', via: args.via, token, id: nid, due, at: sentAt, ...(await callTool(to, 'retract_notification', { id: nid }, name)) });
          }),
        );
      }
    }
  });
  await Promise.all(loops);
  await Promise.all(retracts);
  await Promise.all(answering);
  // Edits scheduled by the operator's decisions keep coming while it works through its queue.
  await operator?.finish();
  for (let n = 0; n < edits.length; ) {
    const batch = edits.slice(n);
    n = edits.length;
    await Promise.allSettled(batch);
  }
}

/**
 * One escalated send (a policy, and its own choices or an acknowledgement), recorded as a
 * send (`escalate` names its policy); once acknowledged, its answers timed as ESCALATE_SHARE
 * says. Resolves to the answers' promises.
 */
async function escalate({ rand, token, name, home, other, record, links }) {
  const args = sendArgs(rand, token);
  // An SMS first send carries no link: its policy's first step must bring one (email or Slack).
  const policy = args.via === 'sms' ? pick(rand, ['page', 'mail']) : pick(rand, Object.keys(ESCALATIONS));
  args.escalate = policy;
  if (rand() < ESCALATE_CHOICES_SHARE) args.ask = { choices: CHOICES };
  const keyed = rand() < 0.2;
  if (keyed) args.idempotency_key = `key-${token}`;
  const o = await callTool(home, 'send_notification', args, name);
  record({ kind: 'send', via: args.via, token, keyed, escalate: policy, client: name, url: home, ...o });
  const root = o.code === 'OK' && o.structured?.status === 'sent' ? o.structured.id : undefined;
  const plan = rand();
  if (!root || plan < ANSWER_NONE) return [];
  const dues = ESCALATIONS[policy].map(([, , ms]) => Date.parse(o.structured.accepted_at) + ms);
  let at;
  if (plan < ANSWER_NONE + ANSWER_EARLY) at = Date.now() + rand() * Math.max(0, dues[0] - 500 - Date.now());
  else if (plan < ANSWER_NONE + ANSWER_EARLY + ANSWER_RACE) at = pick(rand, dues) + (rand() * 2 - 1) * RACE_MS;
  else at = dues.at(-1) + 500 + rand() * 1_500;
  const choices = args.ask?.choices ?? ['Acknowledge'];
  const first = { at, choice: pick(rand, choices), to: rand() < 0.5 ? home : other };
  const posts = [first];
  if (rand() < SECOND_ANSWER_SHARE) {
    // Racing: the same moment, the other replica, another choice where there is one.
    const racing = rand() < 0.5;
    const others = choices.length > 1 ? choices.filter((c) => c !== first.choice) : choices;
    posts.push({ at: racing ? at : at + rand() * 2_000, choice: pick(rand, others), to: first.to === home ? other : home });
  }
  return posts.map((p) => sleepUntil(p.at).then(() => answerOnce({ ...p, root, token, policy, dues, links, record })));
}

const sleepUntil = (at) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

/**
 * POSTs `choice` to `<to's origin>/answer/<token>` (same origin: an Origin header of that
 * replica), with a link delivered so far for the first send or one of its steps, waiting up
 * to LINK_WAIT_MS for one. Records when it was sent and answered, and what the page said:
 * `recorded` (200, this answer stood), `answered` (409: another stood, its choice shown), or
 * another status.
 */
async function answerOnce({ at, choice, to, root, token, policy, dues, links, record }) {
  const origin = new URL(to).origin;
  let from = links(token, root);
  for (const until = Date.now() + LINK_WAIT_MS; from.length === 0 && Date.now() < until; from = links(token, root)) await new Promise((r) => setTimeout(r, 200));
  const base = { kind: 'answer', root, token, policy, choice, planned_at: at, dues, server: origin };
  if (from.length === 0) return record({ ...base, outcome: 'no_link' });
  const link = from[Math.floor(Math.random() * from.length)];
  const start = Date.now();
  let status = 0;
  let text = '';
  let error;
  try {
    const res = await fetch(`${origin}/answer/${link.token}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: origin },
      body: new URLSearchParams({ choice }).toString(),
      redirect: 'manual',
      signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    error = err.cause?.code ?? err.name;
  }
  const end = Date.now();
  const shown = /answered <strong>([^<]*)<\/strong>/.exec(text)?.[1];
  const outcome = status === 200 && /Answer recorded/.test(text) ? 'recorded' : status === 409 && /Already answered/.test(text) ? 'answered' : status ? `HTTP_${status}` : `NO_ANSWER:${error}`;
  record({ ...base, link_from: link.from, start, end, status, outcome, shown });
}

/**
 * The final state of each scheduled id, read with get_notification as its sender (its own
 * client name) once nothing should be waiting: polls the ones still waiting until `until`
 * (epoch ms). Resolves to Map id -> { code, status?, error_code?, send_at?, first_attempt_at? }.
 */
export async function readFinalStates(waiting, until, { concurrency = 8, everyMs = 1_000, waitingStates = ['scheduled', 'held'], stillWaiting = () => false } = {}) {
  const finals = new Map();
  let left = [...waiting];
  for (;;) {
    const next = [];
    for (let i = 0; i < left.length; i += concurrency) {
      await Promise.all(
        left.slice(i, i + concurrency).map(async (w) => {
          const o = await callTool(w.url, 'get_notification', { id: w.id }, w.client);
          const sc = o.structured ?? {};
          const read = { code: o.code, status: sc.status, error_code: sc.error_code, send_at: sc.send_at, first_attempt_at: sc.attempts?.[0]?.at, approval: sc.approval, answer: sc.answer, escalation: sc.escalation };
          finals.set(w.id, read);
          // Still waiting, or not readable now: asked again until `until`; what it is then is final.
          if (o.code !== 'OK' || waitingStates.includes(sc.status) || stillWaiting(sc)) next.push(w);
        }),
      );
    }
    left = next;
    if (left.length === 0 || Date.now() >= until) return finals;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
