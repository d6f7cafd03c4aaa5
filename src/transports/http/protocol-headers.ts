/**
 * MCP-Protocol-Version handling in front of the SDK's checks: a 2026-07-28 body behind the
 * 2025-era version header some clients' transports still stamp is served as the body says,
 * missing Mcp-Method/Mcp-Name filled from it (why this opens no gap: docs/protocol.md, "A 2025
 * header in front of a 2026 body"). Present mirrored headers must still match.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { PROTOCOL_VERSION_META_KEY, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';

/** The revisions this server serves without the initialize handshake. */
export const MODERN_VERSIONS: readonly string[] = ['2026-07-28'];

const NAME_SOURCES: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The protocol version a JSON-RPC body claims in its `_meta` envelope, if any. */
export function claimedVersion(body: unknown): string | undefined {
  if (!isObject(body) || !isObject(body.params) || !isObject(body.params._meta)) return undefined;
  const version = body.params._meta[PROTOCOL_VERSION_META_KEY];
  return typeof version === 'string' ? version : undefined;
}

/** Whether an `MCP-Protocol-Version` header names a revision without sessions (GET/DELETE get 405). */
export function namesModernVersion(header: string | string[] | undefined): boolean {
  return typeof header === 'string' && MODERN_VERSIONS.includes(header.trim());
}

/**
 * Header replacements for a 2026-07-28 body sent behind a 2025-era version header, or
 * undefined when the request is to be judged as sent.
 */
export function lenientHeaders(headers: IncomingHttpHeaders, body: unknown): Record<string, string> | undefined {
  const header = headers['mcp-protocol-version'];
  const claimed = claimedVersion(body);
  if (typeof header !== 'string' || claimed === undefined || !MODERN_VERSIONS.includes(claimed)) return undefined;
  if (!SUPPORTED_PROTOCOL_VERSIONS.includes(header.trim())) return undefined;
  const out: Record<string, string> = { 'mcp-protocol-version': claimed };
  const { method, params } = body as { method?: unknown; params: Record<string, unknown> };
  if (typeof method !== 'string') return out;
  if (headers['mcp-method'] === undefined) out['mcp-method'] = method;
  const source = Object.hasOwn(NAME_SOURCES, method) ? NAME_SOURCES[method] : undefined;
  const value = source ? params[source] : undefined;
  if (headers['mcp-name'] === undefined && typeof value === 'string') out['mcp-name'] = headerValue(value);
  return out;
}

/** A header value as the revision encodes it: plain when header-safe, else the Base64 sentinel. */
function headerValue(value: string): string {
  const plain = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !(value.startsWith('=?base64?') && value.endsWith('?='));
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}
