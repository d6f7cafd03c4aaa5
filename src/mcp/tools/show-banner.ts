/** show_banner: put an in-app banner in front of one audience segment. */
import { z } from 'zod';
import { errors } from '../../core/errors.js';
import { newBannerId } from '../../core/ids.js';
import type { ObjectToolSpec } from '../tool-kit.js';
import { withErrorShape } from '../tool-result.js';
import { audienceSchema, DEFAULT_LIFETIME_MS, iso, MAX_LIFETIME_MS, RETENTION_MS, SEVERITIES } from '../../banners/model.js';
import { bannersWritten } from '../../banners/hub.js';

const input = z
  .object({
    text: z.string().min(1).max(500),
    audience: audienceSchema,
    severity: z.enum(SEVERITIES).optional().describe('default info'),
    expires_at: z.iso.datetime({ offset: true }).optional().describe('in the future, ≤90 days ahead; default 7 days'),
    dedupe_key: z.string().min(1).max(128).optional(),
  })
  .strict();

export const showBanner: ObjectToolSpec<typeof input> = {
  name: 'show_banner',
  title: 'Show banner',
  // Each rule once: what the schema's keywords and property descriptions say is not repeated here.
  description:
    'Shows an in-app banner to one audience segment until it expires or is dismissed. ' +
    'A viewer sees the banners of each segment it is in: "all" is a segment, not a wildcard. ' +
    'With dedupe_key, an active banner of that audience and key is returned (deduplicated: true), not a new one. ' +
    'Ended banners stay listed 30 days.',
  input,
  outputSchema: withErrorShape({
    properties: {
      banner_id: { type: 'string', description: 'bnr_<uuid>; pass it to dismiss_banner' },
      status: { type: 'string', enum: ['active'] },
      expires_at: { type: 'string', format: 'date-time' },
      deduplicated: { type: 'boolean', description: 'true when an active banner with the same audience and dedupe_key was returned' },
    },
    required: ['banner_id', 'status', 'expires_at', 'deduplicated'],
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async handler(args, ctx) {
    const now = ctx.now();
    let expiresAt = now + DEFAULT_LIFETIME_MS;
    if (args.expires_at !== undefined) {
      expiresAt = Date.parse(args.expires_at);
      if (expiresAt <= now) {
        throw errors.invalidField(
          `expires_at ${args.expires_at} is not in the future (now is ${iso(now)}). Give a later time, or omit it for 7 days.`,
          { path: '/expires_at' },
        );
      }
      if (expiresAt - now > MAX_LIFETIME_MS) {
        throw errors.invalidField(
          `expires_at ${args.expires_at} is more than 90 days ahead; the latest allowed now is ${iso(now + MAX_LIFETIME_MS)}.`,
          { path: '/expires_at' },
        );
      }
    }
    // Retention runs on write, so a server that only reads never deletes anything.
    await ctx.store.purgeBanners(now - RETENTION_MS);
    const candidate = {
      id: newBannerId(),
      text: args.text,
      audience: args.audience,
      severity: args.severity ?? 'info',
      dedupe_key: args.dedupe_key ?? null,
      created_at: now,
      expires_at: expiresAt,
      dismissed_at: null,
    };
    const stored = await ctx.store.insertBanner(candidate);
    bannersWritten(ctx.store);
    const deduplicated = stored.id !== candidate.id;
    ctx.log.info('banner shown', { banner_id: stored.id, audience: stored.audience, severity: stored.severity, deduplicated });
    return {
      banner_id: stored.id,
      status: 'active',
      // A banner stored without expiry (not through this tool) would report the default horizon.
      expires_at: iso(stored.expires_at ?? now + DEFAULT_LIFETIME_MS),
      deduplicated,
    };
  },
};
