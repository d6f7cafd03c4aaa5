/**
 * The webhook targets an operator names (NOTIFY_WEBHOOKS), their secrets
 * (NOTIFY_WEBHOOK_SECRET_<NAME>) and the hosts that may resolve to private addresses
 * (NOTIFY_WEBHOOK_PRIVATE_HOSTS), read and checked at start: a value that cannot be used is a
 * ConfigError that says what to set. The model only ever names a target; the URL stays here.
 */
import { isIP } from 'node:net';
import { ConfigError, list, type Env } from '../../core/env.js';
import { describeValue } from '@notify-mcp/union';
import { blockedAddress } from './address.js';

export const FORMATS = ['standard', 'teams', 'discord', 'google-chat', 'ntfy'] as const;
export type WebhookFormat = (typeof FORMATS)[number];

export interface WebhookTarget {
  readonly name: string;
  readonly format: WebhookFormat;
  readonly url: string;
  /** The target tried when this one clearly did not accept (`name=format:url|fallback`). */
  readonly fallback?: string;
  /** standard: the whsec_ signing secret; ntfy: an access token (sent as a Bearer token). */
  readonly secret?: string;
}

const NAME = /^[a-z][a-z0-9_-]{0,31}$/;
/** Standard Webhooks: `whsec_` and the base64 of 24 to 64 random bytes. */
const WHSEC = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

/** The variable that holds a target's secret: NOTIFY_WEBHOOK_SECRET_ and its name in upper case, `-` as `_`. */
export const secretVariable = (name: string): string => `NOTIFY_WEBHOOK_SECRET_${name.toUpperCase().replaceAll('-', '_')}`;

/** Why a standard target's secret cannot sign, or undefined. */
export function whsecProblem(secret: string): string | undefined {
  if (!WHSEC.test(secret)) return 'is not a Standard Webhooks secret: it must read whsec_ followed by base64';
  const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64').length;
  if (bytes < 24 || bytes > 64) return `decodes to ${bytes} bytes; a whsec_ secret holds 24 to 64`;
  return undefined;
}

/** A host as URL parsing gives it, without IPv6 brackets, lower case. */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '').toLowerCase();

export function privateHosts(raw: string | undefined): string[] {
  return list(raw ?? '').map((h) => h.toLowerCase().replace(/^\[|\]$/g, ''));
}

function targetUrl(name: string, raw: string, allowPrivate: readonly string[]): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`NOTIFY_WEBHOOKS: the URL of ${name} is not a URL; write name=format:https://…`);
  }
  const host = bareHost(url);
  const privateOk = allowPrivate.includes(host);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && privateOk)) {
    throw new ConfigError(
      `NOTIFY_WEBHOOKS: the URL of ${name} must be https (http only for a host on NOTIFY_WEBHOOK_PRIVATE_HOSTS), got ${url.protocol}`,
    );
  }
  if (url.username || url.password)
    throw new ConfigError(`NOTIFY_WEBHOOKS: the URL of ${name} carries credentials; put them in ${secretVariable(name)} instead`);
  if (isIP(host) && !privateOk && blockedAddress(host)) {
    throw new ConfigError(
      `NOTIFY_WEBHOOKS: ${name} points at ${host}, a ${blockedAddress(host)} address; list it on NOTIFY_WEBHOOK_PRIVATE_HOSTS if that is meant`,
    );
  }
  return url.href;
}

function secretOf(name: string, format: WebhookFormat, env: Env): string | undefined {
  const variable = secretVariable(name);
  const secret = env[variable] || undefined;
  if (format === 'standard') {
    if (!secret) throw new ConfigError(`${name} is a standard target: set ${variable} to its signing secret (whsec_…)`);
    const problem = whsecProblem(secret);
    if (problem) throw new ConfigError(`${variable} ${problem}`);
  } else if (secret && format !== 'ntfy') {
    throw new ConfigError(`${variable} is set, but ${format} targets take no secret (the URL carries it); unset it`);
  }
  return secret;
}

/** One `name=format:url[|fallback]` item. */
function target(item: string, env: Env, allowPrivate: readonly string[]): WebhookTarget {
  const eq = item.indexOf('=');
  const name = item.slice(0, eq).trim();
  const rest = item.slice(eq + 1).trim();
  const colon = rest.indexOf(':');
  const format = rest.slice(0, colon) as WebhookFormat;
  if (eq < 1 || colon < 1) throw new ConfigError(`NOTIFY_WEBHOOKS: ${describeValue(item.slice(0, 60))} must read name=format:url`);
  if (!NAME.test(name)) throw new ConfigError(`NOTIFY_WEBHOOKS: ${describeValue(name)} is not a target name (a-z, 0-9, _ or -, ≤32)`);
  if (!FORMATS.includes(format))
    throw new ConfigError(`NOTIFY_WEBHOOKS: ${name} has format ${describeValue(format)}; use one of ${FORMATS.join(', ')}`);
  const [raw, fallback, ...more] = rest.slice(colon + 1).split('|');
  if (more.length) throw new ConfigError(`NOTIFY_WEBHOOKS: ${name} names more than one fallback; chain them through the fallback's own`);
  const url = targetUrl(name, raw!.trim(), allowPrivate);
  const secret = secretOf(name, format, env);
  return { name, format, url, ...(fallback?.trim() ? { fallback: fallback.trim() } : {}), ...(secret ? { secret } : {}) };
}

/** NOTIFY_WEBHOOKS read whole: each target, in order, each fallback naming another target, no loop. */
export function readTargets(env: Env, allowPrivate: readonly string[]): WebhookTarget[] {
  const targets = list(env.NOTIFY_WEBHOOKS ?? '').map((item) => target(item, env, allowPrivate));
  const byName = new Map(targets.map((t) => [t.name, t]));
  if (byName.size !== targets.length) throw new ConfigError('NOTIFY_WEBHOOKS names a target twice');
  for (const t of targets) {
    const seen = new Set([t.name]);
    for (let next = t.fallback; next !== undefined; next = byName.get(next)?.fallback) {
      if (!byName.has(next))
        throw new ConfigError(`NOTIFY_WEBHOOKS: ${t.name} falls back to ${describeValue(next)}, which is not a target`);
      if (seen.has(next)) throw new ConfigError(`NOTIFY_WEBHOOKS: the fallbacks of ${t.name} loop back to ${next}`);
      seen.add(next);
    }
  }
  for (const key of Object.keys(env)) {
    if (key.startsWith('NOTIFY_WEBHOOK_SECRET_') && !targets.some((t) => secretVariable(t.name) === key))
      throw new ConfigError(`${key} is set, but NOTIFY_WEBHOOKS names no target it belongs to; unset it or add the target`);
  }
  return targets;
}

/** A target and its fallbacks, in the order they are tried. */
export function chainOf(name: string, targets: readonly WebhookTarget[]): WebhookTarget[] {
  const chain: WebhookTarget[] = [];
  for (let t = targets.find((x) => x.name === name); t; t = t.fallback ? targets.find((x) => x.name === t!.fallback) : undefined)
    chain.push(t);
  return chain;
}

/** What a record may show of a URL: its origin only (a Discord or Teams URL carries its token in the path and query). */
export const redactedUrl = (url: string): string => `${new URL(url).origin}/…`;
