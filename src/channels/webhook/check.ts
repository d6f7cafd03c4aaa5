/**
 * `notify-mcp doctor` for webhooks: each target's host resolved as a post would resolve it,
 * and judged by the same rule (./address.ts), its secret's shape already checked at start.
 * Nothing is posted: a webhook has no read-only call to make.
 */
import { isIP } from 'node:net';
import { fail, pass, type Check, type CheckContext } from '../../core/check.js';
import { blockedAddress, systemResolve, type Resolve } from './address.js';
import { bareHost, type WebhookTarget } from './targets.js';

function lookupOnce(resolve: Resolve, host: string, timeoutMs: number): Promise<string[]> {
  if (isIP(host)) return Promise.resolve([host]);
  return new Promise((done, reject) => {
    const timer = setTimeout(() => reject(new Error(`no DNS answer within ${timeoutMs} ms`)), timeoutMs);
    resolve(host, (err, addresses) => {
      clearTimeout(timer);
      if (err) reject(err);
      else done(addresses.map((a) => a.address));
    });
  });
}

export async function checkWebhooks(
  settings: { targets: readonly WebhookTarget[]; privateHosts: readonly string[] },
  ctx: CheckContext,
  resolve: Resolve = systemResolve,
): Promise<Check[]> {
  return Promise.all(
    settings.targets.map(async (t): Promise<Check> => {
      const name = `webhook target ${t.name}`;
      const host = bareHost(new URL(t.url));
      const fallback = t.fallback ? `, falls back to ${t.fallback}` : '';
      try {
        const addresses = await lookupOnce(resolve, host, ctx.timeoutMs);
        const blocked = settings.privateHosts.includes(host) ? undefined : addresses.find((a) => blockedAddress(a));
        if (blocked)
          return fail(
            name,
            `${host} resolves to ${blocked}, a ${blockedAddress(blocked)} address: every post would be refused`,
            `point the target at a public host, or list ${host} on NOTIFY_WEBHOOK_PRIVATE_HOSTS if it is meant`,
          );
        return pass(
          name,
          `${t.format} at ${host} (${addresses.join(', ')})${t.secret ? ', with its secret' : ''}${fallback}; not posted to`,
        );
      } catch (err) {
        return fail(name, `${host} does not resolve: ${(err as Error).message}`, "check the URL in NOTIFY_WEBHOOKS and this machine's DNS");
      }
    }),
  );
}
