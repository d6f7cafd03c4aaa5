/**
 * The digest the audit log binds (src/store/audit.ts) and a provider reports for what it
 * handed over (src/providers/types.ts, Endpoint): SHA-256 over key-sorted JSON, so the same
 * value gives the same digest whichever layer or engine made it.
 */
import { hash as oneShotHash } from 'node:crypto';

// The one-shot hash (Node >= 20.12), cheaper than createHash per entry: verify hashes every entry of the chain.
export const sha256 = (text: string): string => oneShotHash('sha256', text, 'hex');

/** JSON with object keys sorted at every depth: the same value gives the same bytes, whatever the engine returned. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  // Concatenated in loops, not filter/map/join: every audited write digests its payload.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = '{';
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(k)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}

export const digestOf = (value: unknown): string => sha256(canonicalJson(value));
