/** SMTP_URL read as an ordered list of relays (./failover.ts tries them in turn). */

/** `smtps://user:pass@a:465,smtp://b:587`: split before each scheme, so a comma inside a URL stays (encode it as %2C anyway). */
export function smtpRelays(raw: string): string[] {
  return raw
    .split(/,(?=\s*smtps?:\/\/)/)
    .map((u) => u.trim())
    .filter(Boolean);
}

/** A relay as a log line may name it: host and port, never credentials. */
export const relayName = (url: string): string => {
  const u = new URL(url);
  return `${u.hostname}:${u.port || (u.protocol === 'smtps:' ? 465 : 587)}`;
};
