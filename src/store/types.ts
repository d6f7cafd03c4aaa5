/**
 * The store contract. Two implementations pass one shared suite (test/store.suite.ts):
 * SQLite (default) and PostgreSQL (when DATABASE_URL is set, so replicas share state).
 * All times are epoch milliseconds; all methods are safe to call from several processes.
 */

export type DeliveryStatus = 'sent' | 'dry_run' | 'failed';

/** One provider call of a send, as the delivery log keeps it (no payload, no vendor message). */
export interface DeliveryAttempt {
  attempt: number;
  /** sent, transient, rate_limited, rejected, opted_out or unknown */
  outcome: string;
  vendor_code?: string | number;
  latency_ms: number;
}

export interface DeliveryRecord {
  /** `ntf_…` */
  id: string;
  via: string;
  status: DeliveryStatus;
  provider: string;
  provider_message_id: string | null;
  /** The exact provider payload (for email, `{ envelope, messageId, raw }` with the full MIME). */
  payload: unknown;
  error_code: string | null;
  attempts: number;
  /** Every provider call, in order; empty for a dry run. */
  attempt_log: DeliveryAttempt[];
  latency_ms: number;
  /** Authenticated client name (HTTP tokens) or clientInfo.name, when known. */
  client: string | null;
  idempotency_key: string | null;
  created_at: number;
}

export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'existing'; payload_hash: string; state: 'pending'; claimed_at: number }
  | { kind: 'existing'; payload_hash: string; state: 'done'; result: unknown; claimed_at: number };

export type BannerSeverity = 'info' | 'warning' | 'critical';
export type BannerStatus = 'active' | 'dismissed' | 'expired';

export interface BannerRecord {
  /** `bnr_<uuid>` */
  id: string;
  text: string;
  audience: string;
  severity: BannerSeverity;
  dedupe_key: string | null;
  created_at: number;
  expires_at: number | null;
  dismissed_at: number | null;
}

export interface Store {
  /** `sqlite` or `postgres`, for logs. */
  readonly kind: string;

  recordDelivery(record: DeliveryRecord): Promise<void>;
  /** Newest first. */
  listDeliveries(limit: number): Promise<DeliveryRecord[]>;

  /**
   * Atomically claims `key` for a send (`claimed`), or reports the existing claim.
   * A pending claim older than `staleAfterMs` (its owner died) is taken over: `claimed`.
   * Claims older than `ttlMs` count as absent.
   */
  claimIdempotency(
    key: string,
    payloadHash: string,
    now: number,
    opts: { ttlMs: number; staleAfterMs: number },
  ): Promise<IdempotencyClaim>;
  /** Stores the result of a claimed send; later claims see `state: 'done'`. */
  completeIdempotency(key: string, result: unknown): Promise<void>;
  /** Drops a claim whose send failed, so that a retry may send. */
  releaseIdempotency(key: string): Promise<void>;

  isOptedOut(via: string, recipient: string): Promise<boolean>;
  addOptOut(via: string, recipient: string, now: number): Promise<void>;

  /**
   * Inserts `banner`, unless it has a dedupe_key and an active banner (at
   * `banner.created_at`) already holds that key: then that banner is returned and nothing is
   * inserted. Atomic across processes, so replicas racing on one key create one banner.
   */
  insertBanner(banner: BannerRecord): Promise<BannerRecord>;
  /** Deletes banners dismissed or expired before `before` (the retention policy); returns how many. */
  purgeBanners(before: number): Promise<number>;
  getBanner(id: string): Promise<BannerRecord | null>;
  /** The active (undismissed, unexpired) banner with this dedupe key, if any. */
  findActiveBannerByDedupe(dedupeKey: string, now: number): Promise<BannerRecord | null>;
  /** Sets dismissed_at if unset; returns the banner as it is after the call. */
  dismissBanner(id: string, now: number): Promise<BannerRecord | null>;
  /** Banners for any of `audiences` (all when omitted) in `status` (all when omitted), newest first. */
  listBanners(query: { audiences?: string[]; status?: BannerStatus; now: number; limit?: number }): Promise<BannerRecord[]>;
  /**
   * An opaque token that changes whenever any banner is inserted, updated or deleted, by
   * this process or any other sharing the database. Read it BEFORE the banners it guards:
   * a cache entry filled after reading token T is fresh for as long as the token is T.
   */
  bannersVersion(): Promise<string>;

  close(): Promise<void>;
}
