/**
 * The contract every Store implementation passes (src/store/types.ts, one port per aggregate
 * in src/store/ports/), one file per port in ./contract/. Run by test/store/sqlite.test.ts
 * always and test/store/postgres.test.ts when PostgreSQL answers.
 */
import { afterEach, beforeEach, describe } from 'vitest';
import { answersContract } from './contract/answers.js';
import { bannersContract } from './contract/banners.js';
import { claimsContract } from './contract/claims.js';
import { contactsContract } from './contract/contacts.js';
import { countersContract } from './contract/counters.js';
import { deliveriesContract } from './contract/deliveries.js';
import { escalationsContract } from './contract/escalations.js';
import type { StoreHandle } from './contract/fixtures.js';
import { outboxContract } from './contract/outbox.js';
import { receiptsContract } from './contract/receipts.js';
import { sessionsContract } from './contract/sessions.js';

export { delivery, type StoreHandle } from './contract/fixtures.js';

export function storeSuite(name: string, open: () => Promise<StoreHandle>): void {
  describe(`Store contract: ${name}`, () => {
    let h: StoreHandle;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(async () => {
      await h.cleanup();
    });

    outboxContract(() => h);
    deliveriesContract(() => h);
    receiptsContract(() => h);
    claimsContract(() => h);
    countersContract(() => h);
    contactsContract(() => h);
    sessionsContract(() => h);
    bannersContract(() => h);
    answersContract(() => h);
    escalationsContract(() => h);
  });
}
