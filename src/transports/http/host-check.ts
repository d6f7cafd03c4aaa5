/**
 * DNS-rebinding protection. A page on evil.example that rebinds its name to 127.0.0.1
 * still sends `Host: evil.example`, so only the names this server is known by pass: the
 * loopback forms, the bound address, IP literals when bound to every interface (a
 * rebinding attack needs a DNS name, never a literal), and names the operator lists. A
 * browser page on another local origin sends its own Origin, so Origin must be absent or
 * name an allowed host.
 */
import { isIP } from 'node:net';

export interface HostPolicy {
  hostAllowed(hostHeader: string | undefined): boolean;
  originAllowed(originHeader: string | undefined): boolean;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/** `::1` → `[::1]`; names lower-cased. */
export function normalizeHostname(host: string): string {
  const h = host.toLowerCase();
  return isIP(h) === 6 ? `[${h}]` : h;
}

export function isLoopbackHost(host: string): boolean {
  const h = normalizeHostname(host);
  return h === 'localhost' || h === '[::1]' || (isIP(h) === 4 && h.startsWith('127.'));
}

export function createHostPolicy(bound: { host: string; port: number }, extraNames: readonly string[] = []): HostPolicy {
  const boundHost = normalizeHostname(bound.host);
  const wildcard = WILDCARDS.has(boundHost);
  const names = new Set(LOOPBACK_NAMES);
  if (!wildcard) names.add(boundHost);
  // Names the operator lists (a reverse proxy's public name) pass on any port.
  const extra = new Set(extraNames.map(normalizeHostname));

  const allowed = (hostname: string, port: string): boolean => {
    if (extra.has(hostname)) return true;
    const portOk = port === String(bound.port) || (port === '' && bound.port === 80);
    if (!portOk) return false;
    if (names.has(hostname)) return true;
    return wildcard && isIP(hostname.replace(/^\[|\]$/g, '')) !== 0;
  };
  const split = (hostPort: string): [string, string] | undefined => {
    const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(hostPort);
    return m ? [normalizeHostname(m[1]!), m[2] ?? ''] : undefined;
  };

  return {
    hostAllowed(hostHeader) {
      if (!hostHeader) return false;
      const parts = split(hostHeader.trim());
      return parts !== undefined && allowed(...parts);
    },
    originAllowed(originHeader) {
      if (originHeader === undefined) return true;
      let url: URL;
      try {
        url = new URL(originHeader);
      } catch {
        return false; // includes the opaque "null" origin
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
      const port = url.port || (url.protocol === 'http:' ? '80' : '443');
      return allowed(normalizeHostname(url.hostname), port === '80' && bound.port === 80 ? '' : port);
    },
  };
}

/** A header value as a message quotes it: clipped, printable ASCII only (it is the client's text). */
function quoted(value: string | undefined): string {
  if (value === undefined) return 'none';
  const clean = value.replace(/[^\x20-\x7e]/g, '?');
  return JSON.stringify(clean.length > 100 ? `${clean.slice(0, 100)}…` : clean);
}

/** Why a request's Host was refused, and the variable that admits a name this server really has. */
export function hostRefusal(hostHeader: string | undefined): string {
  return (
    `If this server is reached under that name, add it to NOTIFY_HTTP_ALLOWED_HOSTS (e.g. NOTIFY_HTTP_ALLOWED_HOSTS=notify.example.com); ` +
    `Host ${quoted(hostHeader)} is not a name this server answers to (DNS-rebinding protection).`
  );
}

/** Why a request's Origin was refused. */
export function originRefusal(originHeader: string | undefined): string {
  return (
    `If pages on that origin may call this server, add its host name to NOTIFY_HTTP_ALLOWED_HOSTS (e.g. NOTIFY_HTTP_ALLOWED_HOSTS=app.example.com); ` +
    `Origin ${quoted(originHeader)} is not allowed (DNS-rebinding protection).`
  );
}
