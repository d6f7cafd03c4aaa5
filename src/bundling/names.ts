import { createHash } from 'node:crypto';
import type { RenameReason } from './types.js';

/** The name rule the strictest hosts enforce (OpenAI, Anthropic): what every output meets. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
export const MAX_TOOL_NAME = 64;
const HASH_LEN = 8;
/** Room left for the readable part when a `_<hash>` suffix is appended. */
const HEAD_LEN = MAX_TOOL_NAME - HASH_LEN - 1;
/** A long serverId is cut to this when the prefixed name would not fit. */
const MAX_PREFIX = 20;

export const PREFIX_SEPARATOR = '__';

export function isLegalToolName(name: string): boolean {
  return TOOL_NAME_PATTERN.test(name);
}

function sanitize(s: string): string {
  return s.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** Short, stable hash of the parts; distinguishes names that shortening made equal. */
export function shortHash(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, HASH_LEN);
}

export interface Candidate {
  name: string;
  reasons: RenameReason[];
}

/**
 * The name a tool would get, before uniqueness is checked. Never throws: a name that breaks
 * the rule is sanitized, and one that is too long is cut and given a hash of what it was.
 */
export function candidateName(serverId: string, originalName: string, prefix?: RenameReason): Candidate {
  const prefixed = prefix !== undefined;
  const reasons: RenameReason[] = prefixed ? [prefix] : [];
  const raw = prefixed ? `${serverId}${PREFIX_SEPARATOR}${originalName}` : originalName;
  if (isLegalToolName(raw)) return { name: raw, reasons };

  if (originalName.length === 0) reasons.push('empty');
  if (/[^a-zA-Z0-9_-]/.test(raw)) reasons.push('illegal-characters');
  const sid = sanitize(serverId) || 'server';
  const tool = sanitize(originalName) || 'tool';
  const full = prefixed ? `${sid}${PREFIX_SEPARATOR}${tool}` : tool;
  if (full.length <= MAX_TOOL_NAME) return { name: full, reasons };

  reasons.push('too-long');
  // Keep the tool's own name readable: cut the serverId first, then the tail.
  const head = prefixed ? `${sid.slice(0, MAX_PREFIX)}${PREFIX_SEPARATOR}${tool}` : tool;
  return { name: `${head.slice(0, HEAD_LEN)}_${shortHash(serverId, originalName)}`, reasons };
}

/** The n-th alternative for a name that is already taken (n ≥ 1). */
export function alternativeName(base: string, serverId: string, originalName: string, n: number): string {
  return `${base.slice(0, HEAD_LEN)}_${shortHash(serverId, originalName, String(n))}`;
}

/** The head a server's prefixed names start with (before `__`), in full. */
export function serverHead(serverId: string): string {
  return sanitize(serverId) || 'server';
}

/** Every head the reconciler can write for the server: in full, and cut when too long. */
export function serverHeads(serverId: string): string[] {
  const full = serverHead(serverId);
  return full.length > MAX_PREFIX ? [full, full.slice(0, MAX_PREFIX)] : [full];
}

/**
 * The form in which two names read as the same to a person or a lenient host: case and
 * `-`/`_` folded.
 */
export function foldName(name: string): string {
  return name.toLowerCase().replace(/-/g, '_');
}

/**
 * The n-th name in the server's own namespace for a tool whose prefixed name another
 * server's head claims (server ids that nest, such as `a` and `a__b`): the hash follows the
 * head directly, so no longer head can claim it unless a server id is that head and hash.
 */
export function ownNamespaceName(serverId: string, originalName: string, n: number): string {
  const full = serverHead(serverId);
  const head = full.length + PREFIX_SEPARATOR.length + HASH_LEN <= MAX_TOOL_NAME ? full : full.slice(0, MAX_PREFIX);
  const name = `${head}${PREFIX_SEPARATOR}${shortHash(serverId, originalName, 'own', String(n))}_${sanitize(originalName) || 'tool'}`;
  return name.slice(0, MAX_TOOL_NAME);
}
