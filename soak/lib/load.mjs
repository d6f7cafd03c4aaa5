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
 * Runs the clients until `deadline` (epoch ms). `urls` are the servers' /mcp endpoints;
 * client i uses urls[i % n], and a concurrent duplicate goes to the next one (another
 * replica when there are two).
 */
export async function runLoad({ urls, clients, deadline, seed, record }) {
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
      const keyed = rand() < 0.2;
      if (keyed) args.idempotency_key = `key-${token}`;
      if (keyed && rand() < 0.5) {
        // A deliberate concurrent duplicate: the same key and payload, at once, to two servers.
        const [a, b] = await Promise.all([callTool(home, 'send_notification', args, name), callTool(other, 'send_notification', args, name)]);
        record({ kind: 'send', via: args.via, token, keyed: true, duplicate: true, ...a });
        record({ kind: 'send', via: args.via, token, keyed: true, duplicate: true, ...b });
      } else {
        record({ kind: 'send', via: args.via, token, keyed, ...(await callTool(home, 'send_notification', args, name)) });
      }
    }
  });
  await Promise.all(loops);
}
