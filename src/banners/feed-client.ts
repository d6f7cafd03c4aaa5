/** Who follows the live banner feed: the key each follower's share of it is counted under. */

/** The one client of a stdio connection. */
export const STDIO_FEED_CLIENT = 'stdio';

/**
 * Whose share of the feed a follower takes: the token's client name, or when anonymous the
 * remote address (an IPv6 address by its /64, which one host usually holds whole).
 */
export function feedClientKey(tokenClient: string | undefined, remoteAddress: string | undefined): string {
  if (tokenClient !== undefined) return `token:${tokenClient}`;
  const address = (remoteAddress ?? '').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  if (!address.includes(':')) return `address:${address}`;
  return `address:${expandIpv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (zone dropped), lower-case, without leading zeros. */
function expandIpv6(address: string): string[] {
  const bare = address.split('%')[0]!.toLowerCase();
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return groups.map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? String(parseInt(g, 16).toString(16)) : g));
}
