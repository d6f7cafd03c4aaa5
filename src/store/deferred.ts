/**
 * A store that opens after the server has started answering: opening SQLite (loading the
 * native module, WAL pragmas, the migration check) was a tenth of the CPU a stdio start-up
 * spends before its first tools/list, which needs no store. `open()` starts it (the CLI
 * calls it right after serving, and exits on its error as it did at start); any method
 * called before then starts it too and waits for it. Once open, each method is the real
 * store's own, so a call pays nothing for having waited.
 */
import type { Store } from './types.js';

/** Every method of a Store; the check below fails to compile when one is missing. */
const METHODS = [
  'writeRecord',
  'listDeliveries',
  'getDelivery',
  'findDeliveryByProviderMessage',
  'updateDeliveryStatus',
  'claimIdempotency',
  'markIdempotencySending',
  'completeIdempotency',
  'releaseIdempotency',
  'admitRate',
  'findOptedOut',
  'addOptOut',
  'answerApproval',
  'knownContacts',
  'addContacts',
  'listContacts',
  'forgetContact',
  'insertBanner',
  'purgeBanners',
  'getBanner',
  'findActiveBannerByDedupe',
  'dismissBanner',
  'endBanner',
  'listBanners',
  'bannersVersion',
  'holdReceipt',
  'settleHeldReceipts',
] as const satisfies readonly Exclude<keyof Store, 'kind' | 'close'>[];
type Unlisted = Exclude<keyof Store, (typeof METHODS)[number] | 'kind' | 'close'>;
const everyMethodListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyMethodListed;

export interface DeferredStore {
  store: Store;
  /** Opens it (once); resolves with the real store, rejects with the error opening gave. */
  open(): Promise<Store>;
}

export function deferredStore(kind: string, open: () => Promise<Store>): DeferredStore {
  let opening: Promise<Store> | undefined;
  const target = { kind } as Record<string, unknown>;
  const start = () =>
    (opening ??= open().then((real) => {
      for (const m of METHODS) target[m] = (real[m] as (...a: unknown[]) => unknown).bind(real);
      return real;
    }));
  for (const m of METHODS) {
    target[m] = async (...args: unknown[]) => {
      const real = await start();
      return (real[m] as (...a: unknown[]) => unknown)(...args);
    };
  }
  // Closing a store that never opened opens nothing; one still opening is closed once open.
  target.close = async () => {
    if (opening === undefined) return;
    const real = await opening.catch(() => undefined);
    await real?.close();
  };
  return { store: target as unknown as Store, open: start };
}
