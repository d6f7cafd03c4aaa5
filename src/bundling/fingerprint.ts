import { schemaHash } from '@notify-mcp/union';
import type { Tool } from './types.js';

/**
 * Fingerprint of a tool list for cache keys: SHA-256 over the canonical JSON of the list
 * (keys sorted at every depth, order of the list kept), 16 hex. The list order matters on
 * purpose: prompt caches see it.
 */
export function listFingerprint(tools: readonly Tool[]): string {
  return schemaHash(tools);
}
