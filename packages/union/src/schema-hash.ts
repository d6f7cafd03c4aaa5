import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every depth and arrays kept in order. (The common
 * `JSON.stringify(x, Object.keys(x).sort())` passes a replacer allowlist, which drops every
 * nested key that is not also a root key: it must not be used for hashing.)
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** SHA-256 of the canonical JSON, first 16 hex characters. */
export function schemaHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex').slice(0, 16);
}
