/**
 * Where a webhook may connect: never to a loopback, private, link-local or otherwise
 * non-public address, judged on the address the socket is about to use. The check is the
 * socket's own DNS lookup (guardedLookup, given to the HTTP agent), so a name that answers
 * a public address to one lookup and a private one to the next (DNS rebinding) has no second
 * lookup to exploit. A host on NOTIFY_WEBHOOK_PRIVATE_HOSTS is exempt.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const RANGES: readonly [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared (carrier NAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fc00::', 7, 'ipv6', 'private'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const lists = RANGES.map(([net, prefix, family, kind]) => {
  const block = new BlockList();
  block.addSubnet(net, prefix, family);
  return { block, family, kind };
});

/** The IPv4 address an IPv6 one carries (mapped ::ffff:a.b.c.d, or NAT64 64:ff9b::), if any. */
function embeddedV4(address: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!m) return undefined;
  if (m[1]) return m[1];
  const hi = Number.parseInt(m[2]!, 16);
  const lo = Number.parseInt(m[3]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** What kind of non-public address `address` is (`loopback`, `private`…), or undefined for a public one. */
export function blockedAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'unreadable';
  const v4 = family === 6 ? embeddedV4(address) : address;
  const [ip, type] = v4 !== undefined ? [v4, 'ipv4' as const] : [address, 'ipv6' as const];
  return lists.find((l) => l.family === type && l.block.check(ip, type))?.kind;
}

/** The connection was refused before it was made: the host resolved to an address it may not reach. */
export class BlockedAddressError extends Error {
  override readonly name = 'BlockedAddressError';
  readonly code = 'EBLOCKEDADDRESS';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly kind: string,
  ) {
    super(`${host} resolved to ${address}, a ${kind} address`);
  }
}

/** A DNS lookup as net.connect calls it, with every address it found. */
export type Resolve = (host: string, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

export const systemResolve: Resolve = (host, callback) => dnsLookup(host, { all: true, verbatim: true }, callback);

/**
 * The lookup a socket uses: `resolve`'s answer, refused whole when any address in it is not
 * public (a name that answers both would otherwise reach the private one on a retry), unless
 * `mayBePrivate(host)`. What it answers is what the socket connects to.
 */
export function guardedLookup(resolve: Resolve, mayBePrivate: (host: string) => boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
      if (wanted.length === 0) {
        const none = Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
        return callback(none, '', 0);
      }
      if (!mayBePrivate(hostname.toLowerCase())) {
        for (const a of wanted) {
          const kind = blockedAddress(a.address);
          if (kind) return callback(new BlockedAddressError(hostname, a.address, kind), '', 0);
        }
      }
      if (options.all) (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, wanted);
      else callback(null, wanted[0]!.address, wanted[0]!.family);
    });
  };
}
