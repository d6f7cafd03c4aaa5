/**
 * What a banner is on the wire, and the rules every banner tool shares: the audience
 * segment name, lifetimes, retention, and the JSON view of a stored banner.
 */
import { z } from 'zod';
import { bannerStatus } from '../store/banner-status.js';
import type { BannerRecord, BannerSeverity, BannerStatus } from '../store/ports/banners.js';

const DAY_MS = 86_400_000;
export const DEFAULT_LIFETIME_MS = 7 * DAY_MS;
export const MAX_LIFETIME_MS = 90 * DAY_MS;
/** Dismissed and expired banners are kept this long after they ended, then purged on write. */
export const RETENTION_MS = 30 * DAY_MS;
/** list_banners answers at most this many, newest first. */
export const LIST_LIMIT = 100;

export const AUDIENCE_RE = /^[a-z0-9][a-z0-9:_-]{0,63}$/;
export const SEVERITIES = ['info', 'warning', 'critical'] as const satisfies readonly BannerSeverity[];
export const STATUSES = ['active', 'dismissed', 'expired'] as const satisfies readonly BannerStatus[];

export const audienceSchema = z
  .string()
  .regex(AUDIENCE_RE)
  .meta({ examples: ['team:billing'] });

export function iso(ms: number): string;
export function iso(ms: number | null): string | null;
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export interface BannerView {
  banner_id: string;
  text: string;
  audience: string;
  severity: BannerSeverity;
  status: BannerStatus;
  dedupe_key: string | null;
  created_at: string;
  expires_at: string | null;
  dismissed_at: string | null;
}

export function bannerView(b: BannerRecord, now: number): BannerView {
  return {
    banner_id: b.id,
    text: b.text,
    audience: b.audience,
    severity: b.severity,
    status: bannerStatus(b, now),
    dedupe_key: b.dedupe_key,
    created_at: iso(b.created_at),
    expires_at: iso(b.expires_at),
    dismissed_at: iso(b.dismissed_at),
  };
}

const isoOrNull = { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] };

/** JSON Schema of a BannerView, for outputSchemas. */
export const bannerViewSchema = {
  type: 'object',
  properties: {
    banner_id: { type: 'string', description: 'bnr_<uuid>' },
    text: { type: 'string' },
    audience: { type: 'string' },
    severity: { type: 'string', enum: [...SEVERITIES] },
    status: { type: 'string', enum: [...STATUSES] },
    dedupe_key: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: isoOrNull,
    dismissed_at: isoOrNull,
  },
  required: ['banner_id', 'text', 'audience', 'severity', 'status', 'dedupe_key', 'created_at', 'expires_at', 'dismissed_at'],
  additionalProperties: false,
} as const;
