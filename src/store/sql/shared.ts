/**
 * The store methods whose logic is the same on both engines, written once over a Dialect.
 * Each engine extends this class with what truly differs.
 */
import { StoreError } from '../errors.js';
import type { AuditedChange } from '../audit.js';
import type { Store } from '../types.js';
import type {
  ApprovalRecord,
  AuditActor,
  AuditContext,
  AuditEntry,
  AuditHead,
  AuditQuery,
  BannerRecord,
  CapCounter,
  ContactRecord,
  DeliveryAmendment,
  DeliveryDecision,
  DeliveryListing,
  DeliveryQuery,
  DeliveryRecord,
  DeliveryStatusChange,
  HeldRevision,
  OutboxEntry,
  OutboxState,
} from '../types.js';
import { EDIT_WAITING, REVISE_HELD } from './approval-writes.js';
import { AUDIT_FILTERED, AUDIT_FOR, AUDIT_HEAD, AUDIT_PAGE, auditFromRow, auditHeadFromRow } from './audit.js';
import type { Dialect, Statement } from './dialect.js';
import { capCounterFromRow, outboxFromRow, outboxValues, type OutboxStatements } from './outbox.js';
import { bannerFromRow, contactFromRow, deliveryFromRow, deliveryValues, numOrNull, type Row } from './rows.js';
import * as q from './statements.js';
import { PURGE_REVOKED, REVOKE_SESSION, SESSION_REVOKED } from './sessions.js';
import { FIND_UNRECORDED_OUTBOX } from './listing.js';

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

/** The values of DECIDE_DELIVERY for `d` on delivery `id`. */
export const decisionValues = (id: string, d: DeliveryDecision): unknown[] => [
  d.status,
  JSON.stringify(d.approval),
  d.at,
  id,
  d.from,
  d.approval.payload_sha256,
];

export const bannerValues = (b: BannerRecord): unknown[] => [
  b.id,
  b.text,
  b.audience,
  b.severity,
  b.dedupe_key,
  b.created_at,
  b.expires_at,
  b.dismissed_at,
];

export abstract class SqlStore {
  constructor(
    protected readonly sql: Dialect,
    readonly ob: OutboxStatements,
  ) {}

  readonly toDelivery = (r: Row): DeliveryRecord => deliveryFromRow(r, this.sql.json);

  /**
   * Runs write `s` and, in the same transaction, appends the audit entries of the changes it
   * made (`changes`, from the rows its RETURNING gave: none when it changed nothing); the
   * rows. Each engine's own, as its transactions are (./audit.ts's `auditEntriesFor` maps).
   */
  protected abstract audited(s: Statement, params: readonly unknown[], changes: (rows: Row[]) => AuditedChange[]): Promise<Row[]>;

  protected async insertDelivery(r: DeliveryRecord): Promise<void> {
    await this.sql.run(q.INSERT_DELIVERY, deliveryValues(r));
  }

  async listDeliveries(limit: number): Promise<DeliveryRecord[]> {
    return (await this.sql.all(q.LIST_DELIVERIES, [Math.max(0, Math.trunc(limit))])).map(this.toDelivery);
  }

  async findDeliveries(query: DeliveryQuery): Promise<DeliveryRecord[]> {
    const params = [
      query.status ?? null,
      query.via ?? null,
      query.client ?? null,
      query.since ?? null,
      query.until ?? null,
      Math.max(0, Math.trunc(query.limit)),
      query.after ?? null,
    ];
    return (await this.sql.all(q.FIND_DELIVERIES, params)).map(this.toDelivery);
  }

  /** Each engine's findListings statement (./statements.ts). */
  protected abstract readonly listings: Statement;

  async findListings(query: DeliveryQuery, opts: { payloadChars: number; approval: boolean }): Promise<DeliveryListing[]> {
    const params = [
      query.status ?? null,
      query.via ?? null,
      query.client ?? null,
      query.since ?? null,
      query.until ?? null,
      Math.max(0, Math.trunc(query.limit)),
      query.after ?? null,
    ];
    const rows = await this.sql.all(this.listings, [...params, Math.max(0, Math.trunc(opts.payloadChars)), opts.approval ? 1 : 0]);
    return rows.map((r) => ({
      record: this.toDelivery(r),
      head: typeof r.payload_head === 'string' ? r.payload_head : null,
      payloadBytes: numOrNull(r.payload_bytes) ?? 0,
    }));
  }

  async decideDelivery(id: string, d: DeliveryDecision): Promise<boolean> {
    const decided = await this.audited(q.DECIDE_DELIVERY, decisionValues(id, d), (rows) =>
      rows.map(() => ({ write: 'decision', id, decision: d })),
    );
    return decided.length === 1;
  }

  async recordRelease(r: DeliveryRecord): Promise<boolean> {
    const values = [
      r.status,
      r.provider_message_id,
      r.error_code,
      r.attempts,
      JSON.stringify(r.attempt_log),
      r.latency_ms,
      r.provider_status,
      r.status_updated_at,
      r.id,
      r.provider_conversation ?? null,
    ];
    return (await this.audited(q.RECORD_RELEASE, values, (rows) => rows.map(() => ({ write: 'release-record', record: r })))).length === 1;
  }

  async editWaiting(id: string, call: Record<string, unknown>, at: number): Promise<boolean> {
    const rows = await this.audited(EDIT_WAITING, [JSON.stringify(call), id], (edited) =>
      edited.map((row) => ({ write: 'edit-waiting', id, client: (row.client as string | null) ?? null, call, at })),
    );
    return rows.length === 1;
  }

  async reviseHeld(id: string, r: HeldRevision): Promise<boolean> {
    const rows = await this.audited(
      REVISE_HELD,
      [JSON.stringify(r.payload ?? null), JSON.stringify(r.approval), r.at, id, r.from],
      (revised) => revised.map((row) => ({ write: 'revise-held', id, client: (row.client as string | null) ?? null, revision: r })),
    );
    return rows.length === 1;
  }

  async expirePending(createdBefore: number, now: number): Promise<number> {
    const rows = await this.audited(q.EXPIRE_PENDING, [now, createdBefore], (expired) =>
      expired.map((row) => {
        const approval = (
          row.approval === null || row.approval === undefined ? null : this.sql.json(row.approval)
        ) as ApprovalRecord | null;
        const decided: ApprovalRecord = {
          outcome: 'expired',
          reasons: approval?.reasons ?? [],
          payload_sha256: approval?.payload_sha256 ?? '',
          decided_at: now,
        };
        return {
          write: 'decision',
          id: row.id as string,
          decision: { from: 'pending_approval', status: 'expired', approval: decided, at: now },
        };
      }),
    );
    return rows.length;
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

  async amendDelivery(id: string, change: DeliveryAmendment): Promise<boolean> {
    const values = [change.status, JSON.stringify(change.payload ?? null), change.provider_status, change.at, id, change.from];
    const rows = await this.audited(q.AMEND_DELIVERY, values, (amended) =>
      amended.map((row) => ({ write: 'amend', id, client: (row.client as string | null) ?? null, change })),
    );
    return rows.length === 1;
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

  async scheduleSend(entry: OutboxEntry, audit?: AuditContext): Promise<{ kind: 'scheduled' } | { kind: 'existing'; entry: OutboxEntry }> {
    const added = await this.audited(this.ob.insert, outboxValues(entry), (rows) =>
      rows.map(() => ({ write: 'schedule', entry, ctx: audit })),
    );
    if (added.length === 1) return { kind: 'scheduled' };
    // Only the key's unique index refuses quietly; the id is new.
    const row = await this.sql.get(this.ob.byKey, [entry.idem_key]);
    if (!row) throw new StoreError(`outbox entry ${entry.id} was neither scheduled nor found under its key`);
    return { kind: 'existing', entry: outboxFromRow(row) };
  }

  async finishRelease(id: string, owner: string, state: OutboxState, outcome: unknown, now: number): Promise<boolean> {
    const rows = await this.audited(this.ob.finish, [state, JSON.stringify(outcome ?? null), now, id, owner], (finished) =>
      finished.map((row) => ({
        write: 'outbox',
        id,
        client: (row.client as string | null) ?? null,
        state,
        at: now,
        detail: { owner, outcome },
      })),
    );
    return rows.length === 1;
  }

  async holdRelease(id: string, owner: string, dueAt: number, now: number, congested = false): Promise<boolean> {
    const rows = await this.audited(this.ob.hold, [dueAt, id, owner, congested ? now : null], (held) =>
      held.map((row) => ({
        write: 'outbox',
        id,
        client: (row.client as string | null) ?? null,
        state: 'held',
        at: now,
        detail: { owner, due_at: dueAt, ...(congested ? { congested: true } : {}) },
      })),
    );
    return rows.length === 1;
  }

  async moveWaiting(
    id: string,
    from: readonly OutboxState[],
    to: OutboxState,
    now: number,
    by?: AuditActor,
  ): Promise<{ entry: OutboxEntry; moved: boolean } | null> {
    const rows = await this.audited(this.ob.move, [to, now, id, JSON.stringify(from)], (moved) =>
      moved.map((row) => ({
        write: 'outbox',
        id,
        client: (row.client as string | null) ?? null,
        state: to,
        at: now,
        detail: { from },
        by,
      })),
    );
    const moved = rows.length === 1;
    // Read after the write: what moved it on (a release, a cancel) is what this call reports.
    const entry = await this.getOutboxEntry(id);
    return entry ? { entry, moved } : null;
  }

  async getOutboxEntry(id: string): Promise<OutboxEntry | null> {
    const row = await this.sql.get(this.ob.byId, [id]);
    return row ? outboxFromRow(row) : null;
  }

  async listOutbox(states: readonly OutboxState[], limit: number): Promise<OutboxEntry[]> {
    return (await this.sql.all(this.ob.list, [JSON.stringify(states), Math.max(0, Math.trunc(limit))])).map(outboxFromRow);
  }

  async nextDue(states: readonly OutboxState[], leaseMs: number): Promise<number | null> {
    const row = await this.sql.get(this.ob.nextDue, [JSON.stringify(states), leaseMs]);
    return row?.due === null || row?.due === undefined ? null : Number(row.due);
  }

  async oldestRelease(): Promise<number | null> {
    const row = await this.sql.get(this.ob.oldestRelease, []);
    return row?.claimed === null || row?.claimed === undefined ? null : Number(row.claimed);
  }

  async listCapCounters(now: number): Promise<CapCounter[]> {
    return (await this.sql.all(this.ob.capCounters, [now])).map(capCounterFromRow);
  }

  async auditHead(): Promise<AuditHead> {
    const row = await this.sql.get(AUDIT_HEAD, []);
    if (!row) throw new StoreError('audit_head has no row; the database was altered by hand');
    return auditHeadFromRow(row);
  }

  async auditFor(notificationId: string, limit = 1_000): Promise<AuditEntry[]> {
    return (await this.sql.all(AUDIT_FOR, [notificationId, Math.max(0, Math.trunc(limit))])).map(auditFromRow);
  }

  async auditEntries(query: AuditQuery): Promise<AuditEntry[]> {
    const rows =
      query.since === undefined && query.client === undefined && query.notificationId === undefined
        ? await this.sql.all(AUDIT_PAGE, [query.afterSeq, query.limit])
        : await this.sql.all(AUDIT_FILTERED, [
            query.afterSeq,
            query.limit,
            query.since ?? null,
            query.client ?? null,
            query.notificationId ?? null,
          ]);
    return rows.map(auditFromRow);
  }

  async findUnrecordedOutbox(query: Parameters<Store['findUnrecordedOutbox']>[0]): Promise<OutboxEntry[]> {
    const params = [
      query.state ?? null,
      query.via ?? null,
      query.client ?? null,
      query.since ?? null,
      query.until ?? null,
      Math.max(0, Math.trunc(query.limit)),
      query.before?.at ?? null,
      query.before?.id ?? null,
    ];
    return (await this.sql.all(FIND_UNRECORDED_OUTBOX, params)).map(outboxFromRow);
  }

  async revokeSession(id: string, expiresAt: number, now: number): Promise<void> {
    // Ids past their cookie's end are refused by the cookie itself: they need no row.
    await this.sql.run(PURGE_REVOKED, [now]);
    await this.sql.run(REVOKE_SESSION, [id, expiresAt]);
  }

  async sessionRevoked(id: string): Promise<boolean> {
    return (await this.sql.get(SESSION_REVOKED, [id])) !== undefined;
  }

  async bannersVersion(): Promise<string> {
    const row = await this.sql.get(q.BANNERS_VERSION, []);
    if (!row) throw new StoreError('banners_version has no row; the database was altered by hand');
    return `${String(row.epoch)}:${String(row.n)}`;
  }
}
