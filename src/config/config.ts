/**
 * Everything the server can be told comes through here (the environment from ./environment.ts),
 * parsed once, validated, and frozen; the rest of the code receives a `Config`. Each channel
 * module declares the variables it reads and parses them (src/channels/<name>/); this file
 * hands each the environment, and reads the rest itself.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Channel, ConfiguredChannel } from '../channels/channel.js';
import { CHANNELS } from '../channels/registry.js';
import { environment, takeEnvironment } from './environment.js';
import { ConfigError, deepFreeze, list, positiveInt, publicBaseUrl, type Env } from '../core/env.js';
import { unstorableIn } from '../core/storable-text.js';
import { noticeCall, type NoticeTarget } from '../notification/approval-notice.js';
import { APPROVAL_MODES, parseApprovalRules, type ApprovalMode, type ApprovalRule } from '../notification/approval-rules.js';
import { isAllowed } from '../policy/allowlist.js';
import type { RateLimit } from '../policy/rate-limit.js';
import { parseCaps, type CapRule } from '../policy/caps.js';
import { parseQuietHours } from '../policy/quiet-hours.js';
import type { TimeSettings } from '../notification/settings.js';
import { DEFAULT_PROVIDER_CONCURRENCY } from '../providers/slots.js';
import { describeValue } from '@notify-mcp/union';

export { ConfigError } from '../core/env.js';
export type { Allowlist } from '../policy/allowlist.js';
export type { RateLimit } from '../policy/rate-limit.js';

export const PROFILES = ['flat', 'nested', 'oneOf', 'per-channel'] as const;
export type Profile = (typeof PROFILES)[number];

/** Tool groups a host can switch on (NOTIFY_TOOLS) and narrow per token client (NOTIFY_TOKEN_TOOLS). */
export const TOOL_GROUPS = ['send', 'status', 'banners', 'read-only'] as const;
export type ToolGroup = (typeof TOOL_GROUPS)[number];

export interface HttpToken {
  client: string;
  token: string;
  profile?: Profile;
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
  /** Every channel of the list loadConfig was given that its settings offer (webhook: a target is named), configured, in its order. */
  channels: readonly ConfiguredChannel[];
  /**
   * The largest message a transport takes (an HTTP body, a stdio line): 1 MiB, grown by what a
   * channel's calls may carry besides (email attachments), and `why` names the variable that
   * grew it, so a refusal can say what to set.
   */
  messageCap: { bytes: number; why?: string };
  /** allowedHosts: extra Host names accepted (a reverse proxy's public name). */
  /** operators: token clients that may read every client's notifications (NOTIFY_OPERATOR_CLIENTS). */
  http: { tokens: HttpToken[]; readAuth: boolean; allowedHosts: string[]; operators: string[] };
  /**
   * The banner feed for browser apps: read-only tokens (GET /banners, /banners/stream,
   * never /mcp), the origins CORS admits (`*` only when set so), the cap on open streams,
   * and the share of them one client may hold.
   */
  feed: { tokens: HttpToken[]; origins: string[]; maxStreams: number; streamsPerClient: number };
  rateLimits: RateLimit[];
  /** Scheduled sends and quiet hours (NOTIFY_SCHEDULE_GRACE_S, NOTIFY_SCHEDULE_POLL_S, NOTIFY_QUIET_HOURS, NOTIFY_QUIET_HOURS_URGENT). */
  time: TimeSettings;
  /** NOTIFY_CAPS: what each client may send per hour or day. */
  caps: CapRule[];
  /**
   * Which sends need a person's approval (NOTIFY_APPROVAL; none by default), and the key that
   * signs the approval state a 2026-07-28 client carries between rounds (NOTIFY_APPROVAL_KEY;
   * without it, a random key per process: replicas behind a balancer then need it set).
   */
  /** notify: where a send held for the console is announced, with a link to its page (NOTIFY_APPROVAL_NOTIFY, NOTIFY_PUBLIC_URL). */
  approval: { rules: ApprovalRule[]; key: string | undefined; mode: ApprovalMode; ttlMs: number; notify?: NoticeTarget };
  /**
   * The tool groups the server offers (NOTIFY_TOOLS; every group by default), and a narrower
   * set per token client (NOTIFY_TOKEN_TOOLS); a client not named there gets the server's.
   */
  tools: { groups: ToolGroup[]; byClient: Record<string, ToolGroup[]> };
}

function profile(value: string, variable: string): Profile {
  if ((PROFILES as readonly string[]).includes(value)) return value as Profile;
  throw new ConfigError(`${variable}: unknown profile ${describeValue(value)}; use one of ${PROFILES.join(', ')}`);
}

const TOKEN_RE = /^[A-Za-z0-9._~-]{16,}$/;

function httpTokens(raw: string | undefined, variable = 'NOTIFY_HTTP_TOKENS', withProfile = true): HttpToken[] {
  if (!raw) return [];
  const shape = withProfile ? 'client:token[:profile]' : 'name:token';
  return list(raw).map((item): HttpToken => {
    const [client, token, prof, ...rest] = item.split(':');
    if (!client || !token || rest.length > 0 || (prof !== undefined && !withProfile)) {
      throw new ConfigError(`${variable}: ${describeValue(`${client ?? ''}:…`)} must be ${shape}`);
    }
    // The client name is recorded with every send and in every log line of its requests.
    const unstorable = unstorableIn(client);
    if (unstorable)
      throw new ConfigError(
        `${variable}: the client name ${describeValue(client)} holds ${unstorable}, which this server cannot store; rename it`,
      );
    if (!TOKEN_RE.test(token)) {
      throw new ConfigError(`${variable}: the token of ${describeValue(client)} must match [A-Za-z0-9._~-]{16,}`);
    }
    return prof ? { client, token, profile: profile(prof, variable) } : { client, token };
  });
}

/**
 * A token is a client's identity: shared, it would sign one client's sends with the other's
 * name (one client may hold two tokens, to rotate them); and a feed token that is also a tool
 * token would not be read-only.
 */
function assertDistinctTokens(tools: HttpToken[], feed: HttpToken[]): void {
  const owner = new Map<string, string>();
  for (const [variable, tokens] of [
    ['NOTIFY_HTTP_TOKENS', tools],
    ['NOTIFY_FEED_TOKENS', feed],
  ] as const) {
    for (const { client, token } of tokens) {
      const first = owner.get(token);
      if (first !== undefined) {
        throw new ConfigError(`${variable}: ${describeValue(first)} and ${describeValue(client)} have the same token; give each its own`);
      }
      owner.set(token, client);
    }
  }
}

/** `https://app.example.com` (scheme, host, port: what a browser sends as Origin), or `*`. */
function feedOrigins(raw: string | undefined): string[] {
  return list(raw ?? '').map((item) => {
    if (item === '*') return item;
    let origin: string | undefined;
    try {
      origin = new URL(item).origin;
    } catch {
      // refused below
    }
    if (origin === undefined || origin === 'null' || origin !== item.replace(/\/$/, '').toLowerCase()) {
      throw new ConfigError(
        `NOTIFY_FEED_ORIGINS: ${describeValue(item)} is not an origin; list scheme://host[:port] with no path, e.g. https://app.example.com`,
      );
    }
    return origin;
  });
}

/** The open feed streams of a process, and one client's share of them (a quarter by default). */
function streamCaps(env: Env): { maxStreams: number; streamsPerClient: number } {
  const maxStreams = positiveInt(env, 'NOTIFY_FEED_MAX_STREAMS', 1_000);
  const streamsPerClient = positiveInt(env, 'NOTIFY_FEED_CLIENT_STREAMS', Math.max(1, Math.floor(maxStreams / 4)));
  if (streamsPerClient > maxStreams) {
    throw new ConfigError(
      `NOTIFY_FEED_CLIENT_STREAMS (${streamsPerClient}) is more than NOTIFY_FEED_MAX_STREAMS (${maxStreams}); set it to at most that`,
    );
  }
  return { maxStreams, streamsPerClient };
}

const WINDOWS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function rateLimits(raw: string | undefined, channels: readonly string[]): RateLimit[] {
  if (!raw) return [];
  return list(raw).map((item) => {
    const m = /^([a-z0-9*_-]+)=(\d+)\/(s|m|h|d)$/.exec(item);
    if (!m) throw new ConfigError(`NOTIFY_RATE_LIMITS: ${describeValue(item)} must look like sms=20/h`);
    // A limit on a name no channel has would never apply: refuse it rather than ignore it.
    if (m[1] !== '*' && !channels.includes(m[1]!)) {
      throw new ConfigError(`NOTIFY_RATE_LIMITS: ${describeValue(m[1])} is not a channel; use ${[...channels, '*'].join(', ')}`);
    }
    return { via: m[1]!, limit: Number(m[2]), windowMs: WINDOWS[m[3]!]! };
  });
}

function urgentPolicy(raw: string | undefined): 'allow' | 'deny' {
  if (raw === undefined || raw === '' || raw === 'deny') return 'deny';
  if (raw === 'allow') return 'allow';
  throw new ConfigError(`NOTIFY_QUIET_HOURS_URGENT must be allow or deny (default), got ${describeValue(raw)}`);
}

/** Operators are token clients only: a clientInfo name is self-reported, so it can never be one. */
function operators(raw: string | undefined, tokens: readonly HttpToken[]): string[] {
  const names = list(raw ?? '');
  for (const name of names) {
    if (!tokens.some((t) => t.client === name)) {
      throw new ConfigError(
        `NOTIFY_OPERATOR_CLIENTS: ${describeValue(name)} is no client of NOTIFY_HTTP_TOKENS; an operator is a token's client name (e.g. NOTIFY_HTTP_TOKENS=ops:<token> NOTIFY_OPERATOR_CLIENTS=ops)`,
      );
    }
  }
  return names;
}

function toolGroups(names: string[], variable: string, what: string): ToolGroup[] {
  if (names.length === 0)
    throw new ConfigError(`${variable}: ${what} names no tool group; use ${TOOL_GROUPS.join(', ')}, or unset it for all`);
  for (const name of names) {
    if (!(TOOL_GROUPS as readonly string[]).includes(name)) {
      throw new ConfigError(`${variable}: ${describeValue(name)} in ${what} is not a tool group; use ${TOOL_GROUPS.join(', ')}`);
    }
  }
  return [...new Set(names)] as ToolGroup[];
}

/**
 * NOTIFY_TOOLS (comma list) and NOTIFY_TOKEN_TOOLS (`client=group+group,…`). A token's set
 * only narrows the server's: a group the server does not offer is refused, not ignored,
 * since whoever wrote it expected that client to have it. Token clients only: a clientInfo
 * name is self-reported, so narrowing by it would be undone by a rename.
 */
function tools(env: Env, tokens: readonly HttpToken[]): Config['tools'] {
  const groups = env.NOTIFY_TOOLS ? toolGroups(list(env.NOTIFY_TOOLS), 'NOTIFY_TOOLS', 'the list') : [...TOOL_GROUPS];
  const byClient: Record<string, ToolGroup[]> = {};
  for (const item of list(env.NOTIFY_TOKEN_TOOLS ?? '')) {
    const [client, set, ...rest] = item.split('=');
    if (!client || !set || rest.length > 0)
      throw new ConfigError(`NOTIFY_TOKEN_TOOLS: ${describeValue(item)} must be client=group[+group…], e.g. status-bot=status+banners`);
    if (!tokens.some((t) => t.client === client)) {
      throw new ConfigError(
        `NOTIFY_TOKEN_TOOLS: ${describeValue(client)} is no client of NOTIFY_HTTP_TOKENS; name a token's client (e.g. NOTIFY_HTTP_TOKENS=ro:<token> NOTIFY_TOKEN_TOOLS=ro=read-only)`,
      );
    }
    if (Object.hasOwn(byClient, client))
      throw new ConfigError(`NOTIFY_TOKEN_TOOLS: ${describeValue(client)} is named twice; join its groups with +`);
    const own = toolGroups(
      set
        .split('+')
        .map((g) => g.trim())
        .filter(Boolean),
      'NOTIFY_TOKEN_TOOLS',
      describeValue(client),
    );
    const withheld = own.filter((g) => !groups.includes(g));
    if (withheld.length) {
      throw new ConfigError(
        `NOTIFY_TOKEN_TOOLS: ${describeValue(client)} names ${withheld.join(', ')}, which NOTIFY_TOOLS does not offer; a token's groups only narrow the server's (${groups.join(', ')})`,
      );
    }
    byClient[client] = own;
  }
  return { groups, byClient };
}

function clientProfiles(raw: string | undefined): Record<string, Profile> {
  const out: Record<string, Profile> = {};
  for (const item of list(raw ?? '')) {
    const [name, prof] = item.split('=');
    if (!name || !prof) throw new ConfigError(`NOTIFY_CLIENT_PROFILES: ${describeValue(item)} must be clientName=profile`);
    out[name] = profile(prof, 'NOTIFY_CLIENT_PROFILES');
  }
  return out;
}

/** What `pg` connects with; anything else would fail later as a DNS error naming the wrong thing. */
const POSTGRES_SCHEMES = ['postgres:', 'postgresql:'];

function databaseUrl(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let scheme: string;
  try {
    scheme = new URL(raw).protocol;
  } catch {
    throw new ConfigError(
      'DATABASE_URL must be a PostgreSQL URL, e.g. postgres://user:pass@db.example.com:5432/notify; unset it to use SQLite under NOTIFY_DATA_DIR',
    );
  }
  if (!POSTGRES_SCHEMES.includes(scheme)) {
    throw new ConfigError(
      `DATABASE_URL must start with postgres:// or postgresql:// (e.g. postgres://user:pass@db.example.com:5432/notify), not ${scheme}//; ` +
        'only PostgreSQL is supported there. For SQLite, unset DATABASE_URL and set NOTIFY_DATA_DIR.',
    );
  }
  return raw;
}

function approvalMode(raw: string | undefined): ApprovalMode {
  if (!raw) return 'ask';
  if ((APPROVAL_MODES as readonly string[]).includes(raw)) return raw as ApprovalMode;
  throw new ConfigError(
    `NOTIFY_APPROVAL_MODE: ${describeValue(raw)} is not a mode; use ${APPROVAL_MODES.join(', ')} (ask: the client asks its user; console: a person decides in /console)`,
  );
}

function approvalKey(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  // The SDK's HMAC codec refuses shorter keys; say so at start, not at the first approval.
  if (Buffer.byteLength(raw) < 32) throw new ConfigError('NOTIFY_APPROVAL_KEY must be at least 32 bytes (e.g. `openssl rand -hex 32`)');
  return raw;
}

/**
 * NOTIFY_APPROVAL_NOTIFY=`<channel>:<recipient>` (`slack:#approvals`, `email:ops@example.com`).
 * Everything a notice could fail on for good is refused here, at start: a target its channel's
 * branch or allowlist refuses, a mode that never holds, no public URL to link to.
 */
function approvalNotify(env: Env, mode: ApprovalMode, channels: readonly ConfiguredChannel[]): NoticeTarget | undefined {
  const raw = env.NOTIFY_APPROVAL_NOTIFY;
  if (!raw) return undefined;
  const able = channels.filter((c) => c.channel.notice !== undefined).map((c) => c.name);
  const shape = `<channel>:<recipient>, the channel one of ${able.join(', ')} (e.g. ${able[0] ?? 'channel'}:<recipient>)`;
  const at = raw.indexOf(':');
  const via = raw.slice(0, at).trim();
  const to = raw.slice(at + 1).trim();
  if (at < 1 || !to) throw new ConfigError(`NOTIFY_APPROVAL_NOTIFY: ${describeValue(raw)} must be ${shape}`);
  const channel = channels.find((c) => c.name === via);
  if (!channel || !able.includes(via)) {
    throw new ConfigError(`NOTIFY_APPROVAL_NOTIFY: ${describeValue(via)} is not a channel a notice can go through; write ${shape}`);
  }
  if (mode === 'ask') {
    throw new ConfigError(
      'NOTIFY_APPROVAL_NOTIFY announces sends held for the console, and NOTIFY_APPROVAL_MODE=ask never holds one; set NOTIFY_APPROVAL_MODE=console (or ask-then-console), or unset NOTIFY_APPROVAL_NOTIFY',
    );
  }
  const baseUrl = publicBaseUrl(env, 'NOTIFY_PUBLIC_URL');
  if (!baseUrl) {
    throw new ConfigError(
      "NOTIFY_APPROVAL_NOTIFY links each notice to the send's console page: set NOTIFY_PUBLIC_URL to the base URL people reach this server at, e.g. https://notify.example.com",
    );
  }
  const target: NoticeTarget = { via, to, baseUrl };
  const parsed = channel.branch.safeParse(
    noticeCall(channel.channel, target, { id: 'ntf_check', via, client: null, recipientClasses: [] }),
  );
  if (!parsed.success) {
    throw new ConfigError(
      `NOTIFY_APPROVAL_NOTIFY: ${describeValue(to)} is not a recipient the ${channel.channel.label} channel takes (${parsed.error.issues[0]?.message ?? 'refused'}); write ${shape}`,
    );
  }
  if (!isAllowed(channel.channel.allowlist.matcher, to, channel.allow)) {
    const variable = channel.channel.allowlist.variable;
    throw new ConfigError(
      `NOTIFY_APPROVAL_NOTIFY: ${describeValue(to)} is not on the ${via} allowlist (${variable}); add it to ${variable}, or name a target it allows`,
    );
  }
  return target;
}

function defaultDataDir(env: Env): string {
  const base = env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share');
  return join(base, 'notify-mcp');
}

/** `channels`: the channel list to configure, the registry's unless an embedder or a test gives its own. */
export function loadConfig(env: Env = environment(), channels: readonly Channel[] = CHANNELS): Config {
  const names = channels.map((c) => c.name);
  if (new Set(names).size !== names.length) throw new ConfigError(`two channels share a name: ${names.join(', ')}`);
  const level = env.NOTIFY_LOG_LEVEL || 'info';
  if (!['debug', 'info', 'warn', 'error'].includes(level)) {
    throw new ConfigError(`NOTIFY_LOG_LEVEL must be debug, info, warn or error, got ${describeValue(level)}`);
  }

  const tokens = httpTokens(env.NOTIFY_HTTP_TOKENS);
  const config: Omit<Config, 'channels' | 'messageCap'> = {
    dataDir: env.NOTIFY_DATA_DIR || defaultDataDir(env),
    databaseUrl: databaseUrl(env.DATABASE_URL),
    defaultProfile: env.NOTIFY_DEFAULT_PROFILE ? profile(env.NOTIFY_DEFAULT_PROFILE, 'NOTIFY_DEFAULT_PROFILE') : 'flat',
    clientProfiles: clientProfiles(env.NOTIFY_CLIENT_PROFILES),
    sendBudgetMs: positiveInt(env, 'NOTIFY_SEND_BUDGET_MS', 20_000),
    providerConcurrency: positiveInt(env, 'NOTIFY_PROVIDER_CONCURRENCY', DEFAULT_PROVIDER_CONCURRENCY),
    logLevel: level as Config['logLevel'],
    http: {
      tokens,
      operators: operators(env.NOTIFY_OPERATOR_CLIENTS, tokens),
      readAuth: env.NOTIFY_READ_AUTH === '1',
      allowedHosts: list(env.NOTIFY_HTTP_ALLOWED_HOSTS ?? '').map((h) => h.toLowerCase()),
    },
    feed: {
      tokens: httpTokens(env.NOTIFY_FEED_TOKENS, 'NOTIFY_FEED_TOKENS', false),
      origins: feedOrigins(env.NOTIFY_FEED_ORIGINS),
      ...streamCaps(env),
    },
    rateLimits: rateLimits(env.NOTIFY_RATE_LIMITS, names),
    time: {
      graceMs: positiveInt(env, 'NOTIFY_SCHEDULE_GRACE_S', 3_600) * 1000,
      pollMs: positiveInt(env, 'NOTIFY_SCHEDULE_POLL_S', 30) * 1000,
      quietHours: parseQuietHours(env.NOTIFY_QUIET_HOURS, names),
      urgent: urgentPolicy(env.NOTIFY_QUIET_HOURS_URGENT),
    },
    caps: parseCaps(env.NOTIFY_CAPS, [...names, ...channels.flatMap((c) => c.capMeasureNames)]),
    approval: {
      rules: parseApprovalRules(env.NOTIFY_APPROVAL, channels),
      key: approvalKey(env.NOTIFY_APPROVAL_KEY),
      mode: approvalMode(env.NOTIFY_APPROVAL_MODE),
      ttlMs: positiveInt(env, 'NOTIFY_APPROVAL_TTL_S', 86_400) * 1000,
    },
    tools: tools(env, tokens),
  };
  assertDistinctTokens(config.http.tokens, config.feed.tokens);
  // Each channel freezes its own settings; its branch (a zod schema) must stay as zod made it.
  const configured = channels.map((c) => c.configure(env)).filter((c) => c.settings.offered !== false);
  const notify = approvalNotify(env, config.approval.mode, configured);
  if (notify) config.approval.notify = notify;
  return Object.freeze({ ...deepFreeze(config), channels: Object.freeze(configured), messageCap: deepFreeze(messageCap(configured)) });
}

/** The ordinary cap on a message, before a channel's larger calls grow it. */
export const BASE_MESSAGE_BYTES = 1024 * 1024;

function messageCap(channels: readonly ConfiguredChannel[]): Config['messageCap'] {
  let largest: { bytes: number; variable: string } | undefined;
  for (const c of channels) {
    const larger = c.settings.largerCalls;
    if (larger && larger.bytes > (largest?.bytes ?? 0)) largest = larger;
  }
  if (!largest) return { bytes: BASE_MESSAGE_BYTES };
  return {
    bytes: BASE_MESSAGE_BYTES + largest.bytes,
    why: `1 MiB plus what ${largest.variable} lets a call carry; raise that to send more`,
  };
}

export { environment, takeEnvironment };
