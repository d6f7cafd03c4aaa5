/**
 * `Retry-After` as HTTP sends it (delta-seconds or an HTTP date), in milliseconds from now.
 * Undefined when absent or unreadable, so callers fall back to their own backoff.
 */
export function parseRetryAfterMs(value: unknown, now: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw === 'number') return Number.isFinite(raw) && raw >= 0 ? raw * 1000 : undefined;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  const text = raw.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Reads a header from the shapes vendors hand back: a plain object, or a fetch `Headers`. */
export function headerValue(headers: unknown, name: string): unknown {
  if (!headers || typeof headers !== 'object') return undefined;
  const h = headers as { get?: (n: string) => unknown } & Record<string, unknown>;
  if (typeof h.get === 'function') return h.get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(h)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}
