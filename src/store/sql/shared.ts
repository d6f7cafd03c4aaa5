/**
 * The store methods whose logic is the same on both engines, written once over a Dialect.
 * Each engine extends this class with what truly differs.
 */
import { StoreError } from '../errors.js';
import type { BannerRecord, ContactRecord, DeliveryDecision, DeliveryQuery, DeliveryRecord, DeliveryStatusChange } from '../types.js';
import type { Dialect } from './dialect.js';
import { bannerFromRow, contactFromRow, deliveryFromRow, deliveryValues, type Row } from './rows.js';
import * as q from './statements.js';

/** The values of UPDATE_DELIVERY_STATUS for `change` to delivery `id`. */
export const statusChangeValues = (id: string, c: DeliveryStatusChange): unknown[] => [
  c.status,
  c.provider_status,
  c.provider_status_code,
  c.at,
  c.provider_message_id ?? null,
  id,
  c.from,
];

export const bannerValues = (b: BannerRecord): unknown[] => [b.id, b.text, b.audience, b.severity, b.dedupe_key, b.created_at, b.expires_at, b.dismissed_at];

export abstract class SqlStore {
  constructor(protected readonly sql: Dialect) {}

  protected toDelivery = (r: Row): DeliveryRecord => deliveryFromRow(r, this.sql.json);

  protected async insertDelivery(r: DeliveryRecord): Promise<void> {
    await this.sql.run(q.INSERT_DELIVERY, deliveryValues(r));
  }

  async listDeliveries(limit: number): Promise<DeliveryRecord[]> {
    return (await this.sql.all(q.LIST_DELIVERIES, [Math.max(0, Math.trunc(limit))])).map(this.toDelivery);
  }

  async findDeliveries(query: DeliveryQuery): Promise<DeliveryRecord[]> {
    const params = [query.status ?? null, query.via ?? null, query.client ?? null, query.since ?? null, query.until ?? null, Math.max(0, Math.trunc(query.limit))];
    return (await this.sql.all(q.FIND_DELIVERIES, params)).map(this.toDelivery);
  }

  async decideDelivery(id: string, d: DeliveryDecision): Promise<boolean> {
    return (await this.sql.run(q.DECIDE_DELIVERY, [d.status, JSON.stringify(d.approval), d.at, id, d.from])) === 1;
  }

  async recordRelease(r: DeliveryRecord): Promise<boolean> {
    const values = [r.status, r.provider_message_id, r.error_code, r.attempts, JSON.stringify(r.attempt_log), r.latency_ms, r.provider_status, r.status_updated_at, r.id];
    return (await this.sql.run(q.RECORD_RELEASE, values)) === 1;
  }

  async expirePending(createdBefore: number, now: number): Promise<number> {
    return this.sql.run(q.EXPIRE_PENDING, [now, createdBefore]);
  }

  async getDelivery(id: string): Promise<DeliveryRecord | null> {
    const row = await this.sql.get(q.GET_DELIVERY, [id]);
    return row ? this.toDelivery(row) : null;
  }

  async findDeliveryByProviderMessage(via: string, providerMessageId: string): Promise<DeliveryRecord | null> {
    const row = await this.sql.get(q.DELIVERY_BY_PROVIDER_ID, [via, providerMessageId]);
    return row ? this.toDelivery(row) : null;
  }

  async updateDeliveryStatus(id: string, change: DeliveryStatusChange): Promise<boolean> {
    return (await this.sql.run(q.UPDATE_DELIVERY_STATUS, statusChangeValues(id, change))) === 1;
  }

  async markIdempotencySending(key: string, owner: string, notificationId?: string): Promise<boolean> {
    return (await this.sql.run(q.MARK_SENDING, [notificationId ?? null, key, owner])) === 1;
  }

  async completeIdempotency(key: string, owner: string, result: unknown): Promise<boolean> {
    return (await this.sql.run(q.COMPLETE, [JSON.stringify(result ?? null), key, owner])) === 1;
  }

  async releaseIdempotency(key: string, owner: string): Promise<boolean> {
    return (await this.sql.run(q.RELEASE, [key, owner])) === 1;
  }

  async addOptOut(via: string, recipient: string, now: number): Promise<void> {
    await this.sql.run(q.ADD_OPT_OUT, [via, recipient, now]);
  }

  async listContacts(): Promise<ContactRecord[]> {
    return (await this.sql.all(q.LIST_CONTACTS, [])).map(contactFromRow);
  }

  async forgetContact(via: string, recipient: string): Promise<boolean> {
    return (await this.sql.run(q.FORGET_CONTACT, [via, recipient])) > 0;
  }

  async purgeBanners(before: number): Promise<number> {
    return this.sql.run(q.PURGE_BANNERS, [before]);
  }

  async getBanner(id: string): Promise<BannerRecord | null> {
    const row = await this.sql.get(q.GET_BANNER, [id]);
    return row ? bannerFromRow(row) : null;
  }

  async findActiveBannerByDedupe(audience: string, dedupeKey: string, now: number): Promise<BannerRecord | null> {
    const row = await this.sql.get(q.ACTIVE_BY_DEDUPE, [audience, dedupeKey, now]);
    return row ? bannerFromRow(row) : null;
  }

  async dismissBanner(id: string, now: number): Promise<BannerRecord | null> {
    await this.sql.run(q.DISMISS_BANNER, [now, id]);
    return this.getBanner(id);
  }

  async endBanner(id: string, now: number): Promise<{ banner: BannerRecord; dismissed: boolean } | null> {
    const dismissed = (await this.sql.run(q.END_BANNER, [now, id])) > 0;
    // Read after the claim: what stops a banner being active (dismissal, expiry) is final.
    const banner = await this.getBanner(id);
    return banner ? { banner, dismissed } : null;
  }

  async bannersVersion(): Promise<string> {
    const row = await this.sql.get(q.BANNERS_VERSION, []);
    if (!row) throw new StoreError('banners_version has no row; the database was altered by hand');
    return `${String(row.epoch)}:${String(row.n)}`;
  }
}
