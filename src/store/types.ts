/**
 * The store contract: one port per aggregate (./ports/, docs/architecture.md "The store"),
 * and `Store`, every port at once, which each engine implements and the composition root
 * passes around. A use case takes only the ports it uses. Two implementations pass one
 * shared contract (test/store/contract/): SQLite (default) and PostgreSQL (when
 * DATABASE_URL is set, so replicas share state). All times are epoch milliseconds; all
 * methods are safe to call from several processes.
 */
import type { AnswersPort } from './ports/answers.js';
import type { AuditPort } from './ports/audit.js';
import type { BannersPort } from './ports/banners.js';
import type { ClaimsPort } from './ports/claims.js';
import type { ContactsPort } from './ports/contacts.js';
import type { CountersPort } from './ports/counters.js';
import type { DeliveriesPort } from './ports/deliveries.js';
import type { OutboxPort } from './ports/outbox.js';
import type { SessionsPort } from './ports/sessions.js';

export * from './ports/index.js';

/** Every port of the store, and its lifetime. */
export interface Store
  extends DeliveriesPort,
    ClaimsPort,
    OutboxPort,
    AuditPort,
    BannersPort,
    ContactsPort,
    CountersPort,
    SessionsPort,
    AnswersPort {
  /** `sqlite` or `postgres`, for logs. */
  readonly kind: string;
  close(): Promise<void>;
}
