/**
 * The load: N concurrent clients speaking MCP 2026-07-28 over HTTP (stateless JSON-RPC, as
 * a conforming client sends it), each looping over a mix of live sends and banner calls
 * until the deadline. Every answer is classified: a result, a coded tool error, a JSON-RPC
 * error, an HTTP status, or no answer at all (a transport failure, which breaks the run).
 */
const MODERN = '2026-07-28';
const CLIENT_TIMEOUT_MS = 60_000;

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

function sendArgs(rand, token) {
  const r = rand();
  if (r < 0.36) {
    const to = rand() < 0.3 ? [pick(rand, EMAILS), pick(rand, EMAILS)] : pick(rand, EMAILS);
    return { via: 'email', to, subject: `soak ${token}`, body_html: `<p>Soak message <b>${token}</b></p>` };
  }
  if (r < 0.68) {
    return { via: 'sms', to: `+1415555${String(Math.floor(rand() * 10_000)).padStart(4, '0')}`, body: `soak ${token} ok` };
  }
  const mention = rand() < 0.2 ? ' <!here> ' : ' ';
  return { via: 'slack', channel: pick(rand, SLACK_CHANNELS), text: `soak ${token}${mention}done` };
}

/**
 * Scheduled sends (issue 24): this share of the sends carries `send_at` 2-8 s ahead, so
 * through a run they fall due under every fault in turn; this share of those is retracted,
 * half at a moment before the due time, half within RACE_MS of it either side, so some
 * retracts come well before the release, some race it, and some come after it.
 */
export const SCHEDULE_SHARE = 0.15;
export const RETRACT_SHARE = 0.4;
const SEND_AT_MIN_MS = 2_000;
const SEND_AT_SPREAD_MS = 6_000;
const RACE_MS = 750;

/**
 * Runs the clients until `deadline` (epoch ms). `urls` are the servers' /mcp endpoints;
 * client i uses urls[i % n], and a concurrent duplicate goes to the next one (another
 * replica when there are two). Resolves once the retracts still timed after the deadline
 * have been answered too.
 */
export async function runLoad({ urls, clients, deadline, seed, record }) {
  const retracts = [];
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
      if (waiting && rand() < RETRACT_SHARE) {
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
}

/**
 * The final state of each scheduled id, read with get_notification as its sender (its own
 * client name) once nothing should be waiting: polls the ones still waiting until `until`
 * (epoch ms). Resolves to Map id -> { code, status?, error_code?, send_at?, first_attempt_at? }.
 */
export async function readFinalStates(waiting, until, { concurrency = 8, everyMs = 1_000 } = {}) {
  const finals = new Map();
  let left = [...waiting];
  for (;;) {
    const next = [];
    for (let i = 0; i < left.length; i += concurrency) {
      await Promise.all(
        left.slice(i, i + concurrency).map(async (w) => {
          const o = await callTool(w.url, 'get_notification', { id: w.id }, w.client);
          const sc = o.structured ?? {};
          const read = { code: o.code, status: sc.status, error_code: sc.error_code, send_at: sc.send_at, first_attempt_at: sc.attempts?.[0]?.at };
          finals.set(w.id, read);
          // Still waiting, or not readable now: asked again until `until`; what it is then is final.
          if (o.code !== 'OK' || sc.status === 'scheduled' || sc.status === 'held') next.push(w);
        }),
      );
    }
    left = next;
    if (left.length === 0 || Date.now() >= until) return finals;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
