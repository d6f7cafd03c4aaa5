/**
 * The only reader of process.env. Everything the server can be told comes through here,
 * parsed once, validated, and frozen; the rest of the code receives a `Config`. Each channel
 * module declares the variables it reads and parses them (src/channels/<name>/); this file
 * hands each the environment, and reads the rest itself.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Channel, ConfiguredChannel } from './channels/channel.js';
import { CHANNELS } from './channels/registry.js';
import { ConfigError, deepFreeze, list, positiveInt, type Env } from './env.js';
import { parseApprovalRules, type ApprovalRule } from './notification/approval-rules.js';

export { ConfigError } from './env.js';
export type { Allowlist } from './policy/allowlist.js';

export const PROFILES = ['flat', 'nested', 'oneOf', 'per-channel'] as const;
export type Profile = (typeof PROFILES)[number];

/** Requests in flight at once per provider unless NOTIFY_PROVIDER_CONCURRENCY says otherwise. */
export const DEFAULT_PROVIDER_CONCURRENCY = 5;

export interface HttpToken {
  client: string;
  token: string;
  profile?: Profile;
}

export interface RateLimit {
  /** Channel name, or `*` for every channel. */
  via: string;
  limit: number;
  windowMs: number;
}

export interface Config {
  dataDir: string;
  databaseUrl?: string;
  defaultProfile: Profile;
  /** clientInfo.name -> profile */
  clientProfiles: Record<string, Profile>;
  /** Per-call time budget for a send, retries included. */
  sendBudgetMs: number;
  /** Requests in flight at once per provider (SMTP server, Twilio, Slack); more wait in order. */
  providerConcurrency: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Every channel of the list loadConfig was given, configured, in its order. */
  channels: readonly ConfiguredChannel[];
  /** allowedHosts: extra Host names accepted (a reverse proxy's public name). */
  http: { tokens: HttpToken[]; readAuth: boolean; allowedHosts: string[] };
  rateLimits: RateLimit[];
  /**
   * Which sends need a person's approval (NOTIFY_APPROVAL; none by default), and the key that
   * signs the approval state a 2026-07-28 client carries between rounds (NOTIFY_APPROVAL_KEY;
   * without it, a random key per process: replicas behind a balancer then need it set).
   */
  approval: { rules: ApprovalRule[]; key: string | undefined };
}

function profile(value: string, variable: string): Profile {
  if ((PROFILES as readonly string[]).includes(value)) return value as Profile;
  throw new ConfigError(`${variable}: unknown profile "${value}"; use one of ${PROFILES.join(', ')}`);
}

const TOKEN_RE = /^[A-Za-z0-9._~-]{16,}$/;

function httpTokens(raw: string | undefined): HttpToken[] {
  if (!raw) return [];
  const tokens = list(raw).map((item): HttpToken => {
    const [client, token, prof, ...rest] = item.split(':');
    if (!client || !token || rest.length > 0) {
      throw new ConfigError(`NOTIFY_HTTP_TOKENS: "${client ?? ''}:…" must be client:token[:profile]`);
    }
    if (!TOKEN_RE.test(token)) {
      throw new ConfigError(`NOTIFY_HTTP_TOKENS: the token of "${client}" must match [A-Za-z0-9._~-]{16,}`);
    }
    return prof ? { client, token, profile: profile(prof, 'NOTIFY_HTTP_TOKENS') } : { client, token };
  });
  // A token is a client's identity: shared, it would sign one client's sends with the other's
  // name. (One client may hold two tokens, to rotate them.)
  const owner = new Map<string, string>();
  for (const { client, token } of tokens) {
    const first = owner.get(token);
    if (first !== undefined) {
      throw new ConfigError(`NOTIFY_HTTP_TOKENS: "${first}" and "${client}" have the same token; give each client its own`);
    }
    owner.set(token, client);
  }
  return tokens;
}

const WINDOWS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function rateLimits(raw: string | undefined, channels: readonly string[]): RateLimit[] {
  if (!raw) return [];
  return list(raw).map((item) => {
    const m = /^([a-z0-9*_-]+)=(\d+)\/(s|m|h|d)$/.exec(item);
    if (!m) throw new ConfigError(`NOTIFY_RATE_LIMITS: "${item}" must look like sms=20/h`);
    // A limit on a name no channel has would never apply: refuse it rather than ignore it.
    if (m[1] !== '*' && !channels.includes(m[1]!)) {
      throw new ConfigError(`NOTIFY_RATE_LIMITS: "${m[1]}" is not a channel; use ${[...channels, '*'].join(', ')}`);
    }
    return { via: m[1]!, limit: Number(m[2]), windowMs: WINDOWS[m[3]!]! };
  });
}

function clientProfiles(raw: string | undefined): Record<string, Profile> {
  const out: Record<string, Profile> = {};
  for (const item of list(raw ?? '')) {
    const [name, prof] = item.split('=');
    if (!name || !prof) throw new ConfigError(`NOTIFY_CLIENT_PROFILES: "${item}" must be clientName=profile`);
    out[name] = profile(prof, 'NOTIFY_CLIENT_PROFILES');
  }
  return out;
}

function approvalKey(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  // The SDK's HMAC codec refuses shorter keys; say so at start, not at the first approval.
  if (Buffer.byteLength(raw) < 32) throw new ConfigError('NOTIFY_APPROVAL_KEY must be at least 32 bytes (e.g. `openssl rand -hex 32`)');
  return raw;
}

function defaultDataDir(env: Env): string {
  const base = env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share');
  return join(base, 'notify-mcp');
}

/** `channels`: the channel list to configure, the registry's unless an embedder or a test gives its own. */
export function loadConfig(env: Env = process.env, channels: readonly Channel[] = CHANNELS): Config {
  const names = channels.map((c) => c.name);
  if (new Set(names).size !== names.length) throw new ConfigError(`two channels share a name: ${names.join(', ')}`);
  const level = env.NOTIFY_LOG_LEVEL || 'info';
  if (!['debug', 'info', 'warn', 'error'].includes(level)) {
    throw new ConfigError(`NOTIFY_LOG_LEVEL must be debug, info, warn or error, got "${level}"`);
  }

  const config: Omit<Config, 'channels'> = {
    dataDir: env.NOTIFY_DATA_DIR || defaultDataDir(env),
    databaseUrl: env.DATABASE_URL || undefined,
    defaultProfile: env.NOTIFY_DEFAULT_PROFILE ? profile(env.NOTIFY_DEFAULT_PROFILE, 'NOTIFY_DEFAULT_PROFILE') : 'flat',
    clientProfiles: clientProfiles(env.NOTIFY_CLIENT_PROFILES),
    sendBudgetMs: positiveInt(env, 'NOTIFY_SEND_BUDGET_MS', 20_000),
    providerConcurrency: positiveInt(env, 'NOTIFY_PROVIDER_CONCURRENCY', DEFAULT_PROVIDER_CONCURRENCY),
    logLevel: level as Config['logLevel'],
    http: {
      tokens: httpTokens(env.NOTIFY_HTTP_TOKENS),
      readAuth: env.NOTIFY_READ_AUTH === '1',
      allowedHosts: list(env.NOTIFY_HTTP_ALLOWED_HOSTS ?? '').map((h) => h.toLowerCase()),
    },
    rateLimits: rateLimits(env.NOTIFY_RATE_LIMITS, names),
    approval: { rules: parseApprovalRules(env.NOTIFY_APPROVAL, channels), key: approvalKey(env.NOTIFY_APPROVAL_KEY) },
  };
  // Each channel freezes its own settings; its branch (a zod schema) must stay as zod made it.
  return Object.freeze({ ...deepFreeze(config), channels: Object.freeze(channels.map((c) => c.configure(env))) });
}
