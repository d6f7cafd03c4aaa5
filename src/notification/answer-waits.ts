/**
 * Waits for answers (get_notification's wait_s): one poller per process reads every waiting
 * id in one query, every POLL_MS while any wait is open, so an answer taken by any process
 * or replica sharing the store ends its waits within that. The number of open waits is
 * bounded: past it, a wait is refused at once and the caller answers with the current state.
 */
import type { AnswersPort } from '../store/ports/answers.js';

/** How often the open waits are checked (one query for all of them). */
export const POLL_MS = 100;
/** Open waits per process by default. */
export const MAX_WAITS = 1_000;

/** How a wait ended: the answer landed, the time was up (or the caller went away), or no wait was open (too many). */
export type WaitEnd = 'answered' | 'timeout' | 'full';

interface Waiter {
  id: string;
  done(end: WaitEnd): void;
}

export interface AnswerWaits {
  /** Resolves once `id`'s question is answered, `ms` has passed, or `signal` aborts; `full` at once past the bound. */
  wait(id: string, ms: number, signal?: AbortSignal): Promise<WaitEnd>;
  /** Waits open now. */
  readonly open: number;
  /** Ends every wait (as timeout) and the poller. */
  close(): void;
}

export function answerWaits(
  store: Pick<AnswersPort, 'answeredAmong'>,
  opts: { pollMs?: number; max?: number; onError?: (err: unknown) => void } = {},
): AnswerWaits {
  const waiters = new Set<Waiter>();
  const max = opts.max ?? MAX_WAITS;
  let timer: NodeJS.Timeout | undefined;
  let polling = false;

  const poll = async () => {
    if (polling || waiters.size === 0) return;
    polling = true;
    try {
      const ids = [...new Set([...waiters].map((w) => w.id))];
      const answered = new Set((await store.answeredAmong(ids)).map((q) => q.notification_id));
      for (const w of waiters) if (answered.has(w.id)) w.done('answered');
    } catch (err) {
      // A store hiccup: the next tick tries again; the waits end at their time at worst.
      opts.onError?.(err);
    } finally {
      polling = false;
    }
  };
  const start = () => {
    timer ??= setInterval(() => void poll(), opts.pollMs ?? POLL_MS);
    timer.unref?.();
  };
  const stopIfIdle = () => {
    if (waiters.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  return {
    get open() {
      return waiters.size;
    },
    wait(id, ms, signal) {
      if (waiters.size >= max) return Promise.resolve('full');
      return new Promise<WaitEnd>((resolve) => {
        const waiter: Waiter = {
          id,
          done: (end) => {
            if (!waiters.delete(waiter)) return;
            clearTimeout(timeout);
            signal?.removeEventListener('abort', onAbort);
            stopIfIdle();
            resolve(end);
          },
        };
        const onAbort = () => waiter.done('timeout');
        const timeout = setTimeout(() => waiter.done('timeout'), ms);
        waiters.add(waiter);
        signal?.addEventListener('abort', onAbort, { once: true });
        if (signal?.aborted) return onAbort();
        start();
      });
    },
    close() {
      for (const w of [...waiters]) w.done('timeout');
      stopIfIdle();
    },
  };
}
