/**
 * Showing a banner (show_banner, and the console's form): one audience segment sees it until
 * it expires or is dismissed. With a dedupe key, an active banner of that audience and key is
 * the answer (deduplicated), not a new one. Retention runs here, on write.
 */
import { z } from 'zod';
import { errors } from '../core/errors.js';
import { newBannerId } from '../core/ids.js';
import type { Logger } from '../core/log.js';
import type { BannersPort } from '../store/ports/banners.js';
import { bannersWritten } from './hub.js';
import { audienceSchema, DEFAULT_LIFETIME_MS, iso, MAX_LIFETIME_MS, RETENTION_MS, SEVERITIES } from './model.js';

/** What showing a banner takes: show_banner's input, which the console's form is validated against too. */
export const showBannerInput = z
  .object({
    text: z.string().min(1).max(500),
    audience: audienceSchema,
    severity: z.enum(SEVERITIES).optional().describe('default info'),
    expires_at: z.iso.datetime({ offset: true }).optional().describe('in the future, ≤90 days ahead; default 7 days'),
    dedupe_key: z.string().min(1).max(128).optional(),
  })
  .strict();

export type ShowBanner = z.infer<typeof showBannerInput>;

/** What the banner use cases need: the store, a log, the clock. */
export interface BannerDeps {
  store: BannersPort;
  log: Logger;
  now: () => number;
}

/** What showing answers: the banner (a new one, or the active one it deduplicated to) and when it expires. */
export interface Shown {
  banner_id: string;
  status: 'active';
  expires_at: string;
  deduplicated: boolean;
}

/** When a banner shown now expires: `expires_at` checked against the lifetime bounds, or the default. */
function expiryOf(expiresAtText: string | undefined, now: number): number {
  if (expiresAtText === undefined) return now + DEFAULT_LIFETIME_MS;
  const expiresAt = Date.parse(expiresAtText);
  if (expiresAt <= now) {
    throw errors.invalidField(
      `expires_at ${expiresAtText} is not in the future (now is ${iso(now)}). Give a later time, or omit it for 7 days.`,
      { path: '/expires_at' },
    );
  }
  if (expiresAt - now > MAX_LIFETIME_MS) {
    throw errors.invalidField(
      `expires_at ${expiresAtText} is more than 90 days ahead; the latest allowed now is ${iso(now + MAX_LIFETIME_MS)}.`,
      { path: '/expires_at' },
    );
  }
  return expiresAt;
}

/** Shows banner `input`; throws INVALID_FIELD for an expiry out of bounds. */
export async function showBanner(deps: BannerDeps, input: ShowBanner): Promise<Shown> {
  const now = deps.now();
  const expiresAt = expiryOf(input.expires_at, now);
  // Retention runs on write, so a server that only reads never deletes anything.
  await deps.store.purgeBanners(now - RETENTION_MS);
  const candidate = {
    id: newBannerId(),
    text: input.text,
    audience: input.audience,
    severity: input.severity ?? 'info',
    dedupe_key: input.dedupe_key ?? null,
    created_at: now,
    expires_at: expiresAt,
    dismissed_at: null,
  };
  const stored = await deps.store.insertBanner(candidate);
  bannersWritten(deps.store);
  const deduplicated = stored.id !== candidate.id;
  deps.log.info('banner shown', { banner_id: stored.id, audience: stored.audience, severity: stored.severity, deduplicated });
  return {
    banner_id: stored.id,
    status: 'active',
    // A banner stored without expiry (not through this use case) would report the default horizon.
    expires_at: iso(stored.expires_at ?? now + DEFAULT_LIFETIME_MS),
    deduplicated,
  };
}
