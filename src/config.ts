/**
 * The only reader of process.env. Everything the server can be told comes through here,
 * parsed once, validated, and frozen; the rest of the code receives a `Config`.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { allowEntryProblem, type Via } from './policy/allowlist.js';

export const PROFILES = ['flat', 'nested', 'oneOf', 'per-channel'] as const;
export type Profile = (typeof PROFILES)[number];

/** Requests in flight at once per provider unless NOTIFY_PROVIDER_CONCURRENCY says otherwise. */
export const DEFAULT_PROVIDER_CONCURRENCY = 5;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** `*` allows any recipient; an empty list allows none. */
export interface Allowlist {
  any: boolean;
  entries: string[];
}

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
  smsMaxSegments: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  email: { live: boolean; smtpUrl?: string; from: string; allow?: Allowlist };
  sms: {
    live: boolean;
    accountSid?: string;
    authToken?: string;
    from?: string;
    messagingServiceSid?: string;
    apiUrl?: string;
    allow?: Allowlist;
  };
  slack: {
    live: boolean;
    botToken?: string;
    apiUrl?: string;
    allow?: Allowlist;
    /** Post broadcast mentions (<!channel>, <!here>, user groups…) as written; otherwise they are made inert. */
    allowBroadcast: boolean;
  };
  /** allowedHosts: extra Host names accepted (a reverse proxy's public name). */
  http: { tokens: HttpToken[]; readAuth: boolean; allowedHosts: string[] };
  rateLimits: RateLimit[];
}

type Env = Record<string, string | undefined>;

function profile(value: string, variable: string): Profile {
  if ((PROFILES as readonly string[]).includes(value)) return value as Profile;
  throw new ConfigError(`${variable}: unknown profile "${value}"; use one of ${PROFILES.join(', ')}`);
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function allowlist(env: Env, variable: string, via: Via, live: boolean): Allowlist | undefined {
  const raw = env[variable];
  if (raw === undefined) {
    if (live) {
      throw new ConfigError(
        `${via} is live (credentials are set) but ${variable} is not: set ${variable} to the recipients it may reach (comma list; "*" allows any)`,
      );
    }
    return undefined;
  }
  const entries = list(raw).filter((e) => e !== '*');
  // An entry the matcher cannot read would match nothing, or the wrong thing: refuse it now.
  for (const entry of entries) {
    const problem = allowEntryProblem(via, entry);
    if (problem) throw new ConfigError(`${variable}: "${entry}" ${problem}`);
  }
  // Kept as written: Slack IDs are case-sensitive; each matcher folds what it compares.
  return { any: list(raw).includes('*'), entries };
}

/** `1` on, `0` or empty off; anything else is refused rather than guessed. */
function flag(env: Env, variable: string): boolean {
  const raw = env[variable];
  if (raw === undefined || raw === '' || raw === '0') return false;
  if (raw === '1') return true;
  throw new ConfigError(`${variable} must be 1 (on) or 0 (off), got "${raw}"`);
}

function positiveInt(env: Env, variable: string, fallback: number): number {
  const raw = env[variable];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${variable} must be a positive integer, got "${raw}"`);
  return n;
}

function loopbackOrigin(env: Env, variable: string): string | undefined {
  const raw = env[variable];
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${variable} must be a URL, got "${raw}"`);
  }
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    throw new ConfigError(`${variable} is a test override and must point at loopback, got "${url.hostname}"`);
  }
  return url.origin;
}

const TOKEN_RE = /^[A-Za-z0-9._~-]{16,}$/;

function httpTokens(raw: string | undefined): HttpToken[] {
  if (!raw) return [];
  return list(raw).map((item) => {
    const [client, token, prof, ...rest] = item.split(':');
    if (!client || !token || rest.length > 0) {
      throw new ConfigError(`NOTIFY_HTTP_TOKENS: "${client ?? ''}:…" must be client:token[:profile]`);
    }
    if (!TOKEN_RE.test(token)) {
      throw new ConfigError(`NOTIFY_HTTP_TOKENS: the token of "${client}" must match [A-Za-z0-9._~-]{16,}`);
    }
    return prof ? { client, token, profile: profile(prof, 'NOTIFY_HTTP_TOKENS') } : { client, token };
  });
}

const WINDOWS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function rateLimits(raw: string | undefined): RateLimit[] {
  if (!raw) return [];
  return list(raw).map((item) => {
    const m = /^([a-z*_-]+)=(\d+)\/(s|m|h|d)$/.exec(item);
    if (!m) throw new ConfigError(`NOTIFY_RATE_LIMITS: "${item}" must look like sms=20/h`);
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

function defaultDataDir(env: Env): string {
  const base = env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share');
  return join(base, 'notify-mcp');
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

export function loadConfig(env: Env = process.env): Config {
  const smtpUrl = env.SMTP_URL || undefined;
  if (smtpUrl && !/^smtps?:\/\/[^/]/.test(smtpUrl)) {
    throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL, e.g. smtps://user:pass@smtp.example.com:465');
  }
  const emailLive = Boolean(smtpUrl);
  if (emailLive && !env.EMAIL_FROM) throw new ConfigError('SMTP_URL is set but EMAIL_FROM is not: set the sender address');

  const accountSid = env.TWILIO_ACCOUNT_SID || undefined;
  const authToken = env.TWILIO_AUTH_TOKEN || undefined;
  const smsLive = Boolean(accountSid && authToken);
  if (smsLive && !env.TWILIO_FROM && !env.TWILIO_MESSAGING_SERVICE_SID) {
    throw new ConfigError('Twilio credentials are set but neither TWILIO_FROM nor TWILIO_MESSAGING_SERVICE_SID is');
  }
  const botToken = env.SLACK_BOT_TOKEN || undefined;
  const slackLive = Boolean(botToken);

  const level = env.NOTIFY_LOG_LEVEL || 'info';
  if (!['debug', 'info', 'warn', 'error'].includes(level)) {
    throw new ConfigError(`NOTIFY_LOG_LEVEL must be debug, info, warn or error, got "${level}"`);
  }

  const config: Config = {
    dataDir: env.NOTIFY_DATA_DIR || defaultDataDir(env),
    databaseUrl: env.DATABASE_URL || undefined,
    defaultProfile: env.NOTIFY_DEFAULT_PROFILE ? profile(env.NOTIFY_DEFAULT_PROFILE, 'NOTIFY_DEFAULT_PROFILE') : 'flat',
    clientProfiles: clientProfiles(env.NOTIFY_CLIENT_PROFILES),
    sendBudgetMs: positiveInt(env, 'NOTIFY_SEND_BUDGET_MS', 20_000),
    providerConcurrency: positiveInt(env, 'NOTIFY_PROVIDER_CONCURRENCY', DEFAULT_PROVIDER_CONCURRENCY),
    smsMaxSegments: positiveInt(env, 'NOTIFY_SMS_MAX_SEGMENTS', 1),
    logLevel: level as Config['logLevel'],
    email: {
      live: emailLive,
      smtpUrl,
      from: env.EMAIL_FROM || 'notify-mcp <notify-mcp@localhost>',
      allow: allowlist(env, 'NOTIFY_EMAIL_ALLOW', 'email', emailLive),
    },
    sms: {
      live: smsLive,
      accountSid,
      authToken,
      from: env.TWILIO_FROM || undefined,
      messagingServiceSid: env.TWILIO_MESSAGING_SERVICE_SID || undefined,
      apiUrl: loopbackOrigin(env, 'TWILIO_API_URL'),
      allow: allowlist(env, 'NOTIFY_SMS_ALLOW', 'sms', smsLive),
    },
    slack: {
      live: slackLive,
      botToken,
      apiUrl: loopbackOrigin(env, 'SLACK_API_URL'),
      allow: allowlist(env, 'NOTIFY_SLACK_ALLOW', 'slack', slackLive),
      allowBroadcast: flag(env, 'NOTIFY_SLACK_ALLOW_BROADCAST'),
    },
    http: {
      tokens: httpTokens(env.NOTIFY_HTTP_TOKENS),
      readAuth: env.NOTIFY_READ_AUTH === '1',
      allowedHosts: list(env.NOTIFY_HTTP_ALLOWED_HOSTS ?? '').map((h) => h.toLowerCase()),
    },
    rateLimits: rateLimits(env.NOTIFY_RATE_LIMITS),
  };
  return deepFreeze(config);
}
