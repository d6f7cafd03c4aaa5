/**
 * What every client cell shares: the built server, the calls a model would make per profile
 * (one valid call per channel, one call with a field on the wrong channel), and the checks on
 * the schema a client hands its model.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
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

const FIELDS = { email: ['to', 'cc', 'bcc', 'subject', 'body_html', 'body_text', 'reply_to', 'attachments', 'idempotency_key', 'send_at', 'urgent'], sms: ['to', 'body', 'media_urls', 'idempotency_key', 'send_at', 'urgent'], slack: ['channel', 'text', 'thread', 'blocks', 'idempotency_key', 'send_at', 'urgent'] };

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
  const child = spawn(SERVER_NODE, [CLI, '--http', '--port', '0'], { env: { ...serverEnv('flat'), NOTIFY_LOG_LEVEL: 'info', NOTIFY_CLIENT_PROFILES: PROFILES.map((p) => `compat-${p}=${p}`).join(',') }, stdio: ['ignore', 'ignore', 'pipe'] });
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
  return {
    url: (profile) => `${origin}/mcp/${profile}`,
    stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM')))),
  };
}
