/**
 * Parsers over an environment record, shared by src/config/config.ts and the channel modules. None
 * of them reads process.env: config.ts is the one place that does, and hands the record in.
 * A value that cannot be read is refused with a ConfigError that says what to set.
 */
import { describeValue } from '@notify-mcp/union';

/**
 * An environment, or the part of it a reader may see: a channel module declares its
 * variables (K), and reading any other is a compile error (and undefined at run time).
 */
export type Env<K extends string = string> = { readonly [P in K]?: string | undefined };

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** A comma list, trimmed, without empty items. */
export function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `1` on, `0` or empty off; anything else is refused rather than guessed. */
export function flag<K extends string>(env: Env<K>, variable: NoInfer<K>): boolean {
  const raw = env[variable];
  if (raw === undefined || raw === '' || raw === '0') return false;
  if (raw === '1') return true;
  throw new ConfigError(`${variable} must be 1 (on) or 0 (off), got ${describeValue(raw)}`);
}

/** setTimeout's largest delay (2^31 - 1 ms); past it Node fires after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

export function positiveInt<K extends string>(env: Env<K>, variable: NoInfer<K>, fallback: number): number {
  const raw = env[variable];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  // Bounded at the longest timer delay: these are mostly milliseconds, and a larger one fires at once.
  if (!Number.isInteger(n) || n <= 0 || n > MAX_TIMER_MS) {
    throw new ConfigError(`${variable} must be a positive integer up to ${MAX_TIMER_MS} (e.g. 20000), got ${describeValue(raw)}`);
  }
  return n;
}

/** A test override of a vendor's origin: it must point at this machine. */
export function loopbackOrigin<K extends string>(env: Env<K>, variable: NoInfer<K>): string | undefined {
  const raw = env[variable];
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${variable} must be a URL, got ${describeValue(raw)}`);
  }
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    throw new ConfigError(`${variable} is a test override and must point at loopback, got ${describeValue(url.hostname)}`);
  }
  return url.origin;
}

/** The public base URL a provider reaches this server at (for callbacks): http(s), no query or fragment, no trailing slash. */
export function publicBaseUrl<K extends string>(env: Env<K>, variable: NoInfer<K>): string | undefined {
  const raw = env[variable];
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(
      `${variable} must be the public base URL of this server, such as https://notify.example.com, got ${describeValue(raw)}`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

/** Settings read once and never changed: frozen all the way down. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
