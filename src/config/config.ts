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
import type { NoticeTarget } from '../notification/approval-notice.js';
import { parseApprovalRules, type ApprovalMode, type ApprovalRule } from '../notification/approval-rules.js';
import type { RateLimit } from '../policy/rate-limit.js';
import { parseCaps, type CapRule } from '../policy/caps.js';
import { parseQuietHours } from '../policy/quiet-hours.js';
import type { TimeSettings } from '../notification/settings.js';
import { DEFAULT_PROVIDER_CONCURRENCY } from '../providers/slots.js';
import { describeValue } from '@notify-mcp/union';
import { assertDistinctTokens, feedOrigins, httpTokens, operators, tools, type ToolSettings } from './access.js';
import { approvalKey, approvalMode, approvalNotify, rateLimits, urgentPolicy } from './policies.js';
import { clientProfiles, profile, type HttpToken, type Profile } from './profiles.js';
import { checkEscalations, parseEscalations } from './escalations.js';
import { policyDelays, type EscalationPolicy } from '../notification/escalation-policy.js';

export { ConfigError } from '../core/env.js';
export { PROFILES, TOOL_GROUPS, type HttpToken, type Profile, type ToolGroup } from './profiles.js';
export type { Allowlist } from '../policy/allowlist.js';
export type { RateLimit } from '../policy/rate-limit.js';

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
   * The largest message a transport takes (an HTTP body, a stdio line): BASE_MESSAGE_BYTES, grown by what a
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
  tools: ToolSettings;
  /** NOTIFY_PUBLIC_URL, without a trailing slash: where answer links point (absent: `ask` is refused at the call). */
  publicUrl?: string;
  /** NOTIFY_ESCALATIONS: named policies of steps a send may take (`escalate`); each step checked against its channel at start. */
  escalations: readonly EscalationPolicy[];
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

/** The default share of one client is the process's open streams over this. */
const CLIENT_SHARES = 4;

/** The open feed streams of a process, and one client's share of them. */
function streamCaps(env: Env): { maxStreams: number; streamsPerClient: number } {
  const maxStreams = positiveInt(env, 'NOTIFY_FEED_MAX_STREAMS', 1_000);
  const streamsPerClient = positiveInt(env, 'NOTIFY_FEED_CLIENT_STREAMS', Math.max(1, Math.floor(maxStreams / CLIENT_SHARES)));
  if (streamsPerClient > maxStreams) {
    throw new ConfigError(
      `NOTIFY_FEED_CLIENT_STREAMS (${streamsPerClient}) is more than NOTIFY_FEED_MAX_STREAMS (${maxStreams}); set it to at most that`,
    );
  }
  return { maxStreams, streamsPerClient };
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
  const escalations = parseEscalations(env.NOTIFY_ESCALATIONS);
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
    tools: tools(env.NOTIFY_TOOLS, env.NOTIFY_TOKEN_TOOLS, tokens),
    escalations,
  };
  assertDistinctTokens(config.http.tokens, config.feed.tokens);
  // Each channel freezes its own settings; its branch (a zod schema) must stay as zod made it.
  const delays = policyDelays(escalations);
  const configured = channels.map((c) => c.configure(env, delays)).filter((c) => c.settings.offered !== false);
  checkEscalations(escalations, configured);
  const notify = approvalNotify(
    env.NOTIFY_APPROVAL_NOTIFY,
    () => publicBaseUrl(env, 'NOTIFY_PUBLIC_URL'),
    config.approval.mode,
    configured,
  );
  if (notify) config.approval.notify = notify;
  const publicUrl = publicBaseUrl(env, 'NOTIFY_PUBLIC_URL');
  if (publicUrl) config.publicUrl = publicUrl;
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
