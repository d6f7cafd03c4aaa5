/**
 * Store writes that follow an outcome already fixed: a provider accepted or refused the
 * message, so the write records what happened and can no longer change it. A store that is
 * down would leave the record behind the truth (a sent message read `approved`, a refused
 * attempt's claim read "may have started"), so the write is tried again in the background
 * until `forMs` has passed; every such write is fenced or conditional, so a late one that
 * another process has overtaken changes nothing.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { StoreUnavailableError } from '../store/errors.js';

/** How often a write after an outcome is tried again while the store is down. */
export const RETRY_AFTER_ANSWER_MS = 500;

/**
 * Runs `write`; true when its first try succeeded. On a store that is down it is tried again
 * in the background until `forMs` has passed. `failed` hears each failure, and whether it
 * will be tried again.
 */
export async function writeAfterAnswer(
  write: () => Promise<unknown>,
  forMs: number,
  failed: (err: Error, again: boolean) => void,
): Promise<boolean> {
  const until = Date.now() + forMs;
  const attempt = async (): Promise<'done' | 'again' | 'failed'> => {
    try {
      await write();
      return 'done';
    } catch (err) {
      const again = err instanceof StoreUnavailableError && Date.now() + RETRY_AFTER_ANSWER_MS < until;
      failed(err as Error, again);
      return again ? 'again' : 'failed';
    }
  };
  const first = await attempt();
  if (first === 'again') void retry(attempt);
  return first === 'done';
}

async function retry(attempt: () => Promise<'done' | 'again' | 'failed'>): Promise<void> {
  do await delay(RETRY_AFTER_ANSWER_MS);
  while ((await attempt()) === 'again');
}
