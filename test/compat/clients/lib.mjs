/**
 * What every client cell shares: the built server, the calls a model would make per profile
 * (one valid call per channel, one call with a field on the wrong channel), and the checks on
 * the schema a client hands its model.
 */
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../../..');
export const CLI = join(ROOT, 'dist/cli.js');
/** The Node 20 that built the server (better-sqlite3 is compiled for it); clients may run on 22. */
export const SERVER_NODE = process.env.NOTIFY_SERVER_NODE ?? 'node';
export const PROFILES = ['flat', 'nested', 'oneOf', 'per-channel'];

export function serverEnv(profile) {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? tmpdir(),
    NOTIFY_DATA_DIR: mkdtempSync(join(tmpdir(), 'notify-compat-')),
    NOTIFY_DEFAULT_PROFILE: profile,
    NOTIFY_LOG_LEVEL: 'error',
  };
}

const VALID = {
  email: { via: 'email', to: 'ops@example.com', subject: 'Deploy', body_html: '<p>Deploy 142 is live.</p>' },
  sms: { via: 'sms', to: '+14155550123', body: 'Deploy 142 is live.' },
  slack: { via: 'slack', channel: 'C0123ABCD', text: 'Deploy 142 is live.' },
};
/** subject is not an SMS field: the server answers FIELD_NOT_ON_CHANNEL. */
const BAD = { via: 'sms', to: '+14155550123', body: 'Deploy 142 is live.', subject: 'Deploy' };

/**
 * Each branch's fields under `nested` (OpenAI-strict: every field required, absent ones null),
 * read from the server's pinned nested tool, so that a field added to every branch (`ask`) is
 * sent as null by the model here too.
 */
const nestedSnap = JSON.parse(readFileSync(join(ROOT, 'test/__toolsnaps__/nested.json'), 'utf8'));
const FIELDS = Object.fromEntries(
  nestedSnap.tools
    .find((t) => t.name === 'send_notification')
    .inputSchema.properties.notification.anyOf.map((b) => [b.properties.via.enum[0], Object.keys(b.properties).filter((f) => f !== 'via')]),
);

/** The tool and arguments a model sends for `call` under `profile`. */
export function shaped(profile, call) {
  const { via, ...rest } = call;
  if (profile === 'per-channel') return { name: `send_${via}`, args: rest };
  if (profile === 'nested') {
    const notification = { via, ...Object.fromEntries(FIELDS[via].map((f) => [f, rest[f] ?? null])) };
    for (const [k, v] of Object.entries(rest)) if (!FIELDS[via].includes(k)) notification[k] = v;
    return { name: 'send_notification', args: { notification } };
  }
  return { name: 'send_notification', args: call };
}

export const VALID_CALLS = VALID;

/** How many of the valid calls, sent as `send(name, args)` (resolving to the text the caller got), came back `dry_run`. */
export async function validSent(profile, has, send) {
  let valid = 0;
  for (const call of Object.values(VALID)) {
    const { name, args } = shaped(profile, call);
    if (!has(name)) continue;
    const out = await send(name, args);
    if (out.includes('dry_run') && !out.includes('"isError":true')) valid += 1;
  }
  return valid;
}
export const BAD_CALL = BAD;

/** The patterns the server itself declares (its pinned per-channel list), so a change of rule there is no failure here. */
const snap = JSON.parse(readFileSync(join(ROOT, 'test/__toolsnaps__/per-channel.json'), 'utf8'));
const property = (tool, name) => snap.tools.find((t) => t.name === tool).inputSchema.properties[name];
const E164 = property('send_sms', 'to').pattern;
const SLACK_CHANNEL = property('send_slack', 'channel').pattern;

/** Per-channel rules in the schemas handed to the model: sms `to`'s E.164 pattern and Slack's channel pattern, as patterns. */
export function rulesKept(schemas) {
  const patterns = new Set();
  const walk = (v) => {
    if (typeof v !== 'object' || v === null) return;
    if (typeof v.pattern === 'string') patterns.add(v.pattern);
    for (const x of Object.values(v)) walk(x);
  };
  walk(schemas);
  return patterns.has(E164) && patterns.has(SLACK_CHANNEL);
}

/** `notify-mcp --http` on a free port, one process for every profile (`/mcp/<profile>`). */
export async function startHttp() {
  const { spawn } = await import('node:child_process');
  const child = spawn(SERVER_NODE, [CLI, '--http', '--port', '0'], {
    env: { ...serverEnv('flat'), NOTIFY_LOG_LEVEL: 'info', NOTIFY_CLIENT_PROFILES: PROFILES.map((p) => `compat-${p}=${p}`).join(',') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const origin = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "serving http" line: ${stderr}`)), 20_000);
    child.once('exit', (code) => reject(new Error(`the server exited ${code}: ${stderr}`)));
    child.stderr.setEncoding('utf8').on('data', (c) => {
      stderr += c;
      const m = /"msg":"serving http","url":"(http:\/\/[^/"]+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  const proxy = await startTapProxy(origin);
  return {
    url: (profile) => `${proxy.origin}/mcp/${profile}`,
    stop: async () => {
      await proxy.stop();
      await new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM'))));
    },
  };
}

/**
 * What each cell's client sent, for the era it spoke: stdio through `tee` in front of the
 * server (client → server lines), HTTP through a recording proxy in front of `--http`.
 * A cell starts a fresh tap (beginTap) and reads the era from it when it ends (tapEra).
 */
let tapFile;
export function beginTap() {
  tapFile = join(mkdtempSync(join(tmpdir(), 'notify-compat-tap-')), 'sent.jsonl');
  writeFileSync(tapFile, '');
}

/** The server as a client spawns it over stdio, with what the client writes recorded to the cell's tap. */
export function stdioServer(profile) {
  return { command: 'sh', args: ['-c', 'tee -a "$0" | exec "$1" "$2"', tapFile, SERVER_NODE, CLI], env: serverEnv(profile) };
}

function tapHttp(version, body) {
  let messages;
  try {
    messages = [JSON.parse(body)].flat();
  } catch {
    return;
  }
  appendFileSync(tapFile, messages.map((m) => JSON.stringify({ ...m, httpVersion: version })).join('\n') + '\n');
}

/**
 * The protocol revision the cell's tool calls were made in: 2026-07-28 when they carry its
 * envelope (`_meta` on stdio, the MCP-Protocol-Version header over HTTP), else the revision
 * the client's `initialize` asked for; undefined when nothing was called.
 */
export function tapEra() {
  const sent = readFileSync(tapFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
  const calls = sent.filter((m) => m.method === 'tools/call');
  const call = calls.at(-1);
  if (call === undefined) return undefined;
  const enveloped = call.params?._meta?.['io.modelcontextprotocol/protocolVersion'] ?? call.httpVersion;
  if (enveloped) return enveloped;
  return sent.findLast((m) => m.method === 'initialize')?.params?.protocolVersion;
}

/** A proxy in front of `origin` that records each POST's JSON-RPC messages (and its MCP-Protocol-Version) to the cell's tap. */
async function startTapProxy(origin) {
  const target = new URL(origin);
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST') tapHttp(req.headers['mcp-protocol-version'], body.toString('utf8'));
      const up = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      up.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    stop: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}
