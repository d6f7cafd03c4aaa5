/**
 * The release loop: runs the outbox's passes (./outbox.ts releaseDue). The wake-up: one
 * timer to the next due time, re-armed whenever this process schedules a send (`wake`), and
 * a slow poll (NOTIFY_SCHEDULE_POLL_S, default 30 s) that finds what other processes
 * scheduled; the database is never polled hot.
 */
import type { Logger } from '../core/log.js';
import { leaseMs, releaseDue, WAITING_STATES, type Released } from './outbox.js';
import type { PipelineDeps } from './send-deps.js';
import { DEFAULT_TIME } from './settings.js';

/** The longest a timer is set for (setTimeout's own bound is 2^31 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface OutboxRunner {
  /** This process scheduled a send due at `dueAt`: the timer is brought forward if it is sooner. */
  wake(dueAt: number): void;
  /** Runs a pass now (tests with an injected clock; `notify-mcp worker` at start). */
  tick(): Promise<Released[]>;
  /** Stops the timers and waits for the pass under way. */
  stop(): Promise<void>;
}

/**
 * The release loop over `base.store`. A pass runs at start (what fell due while no process
 * ran), at the next due time, and at least every `pollMs`; passes never overlap. Its releases
 * run over `base` with this runner as their outbox (a send held again wakes it).
 */
export function startOutboxRunner(base: Omit<PipelineDeps, 'outbox'>, log: Logger = base.log): OutboxRunner {
  const deps: PipelineDeps = { ...base, outbox: { wake } };
  const time = deps.config.time ?? DEFAULT_TIME;
  let timer: NodeJS.Timeout | undefined;
  let armedFor = Infinity;
  let running: Promise<Released[]> | undefined;
  let again = false;
  let stopped = false;

  const arm = (at: number) => {
    if (stopped) return;
    // At least once a lease: a pass that sees another process's claim arms for its lease's end.
    const pollAt = deps.now() + Math.min(time.pollMs, leaseMs(deps));
    const target = Math.min(at, pollAt);
    if (timer && target >= armedFor) return;
    clearTimeout(timer);
    armedFor = target;
    // A fired timer forgets itself first: one that fires into a running pass would otherwise
    // stay `timer`, armed for a time now past, and every later arm() would return early.
    timer = setTimeout(
      () => {
        timer = undefined;
        armedFor = Infinity;
        void pass();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, target - deps.now())),
    );
    timer.unref?.();
  };

  const pass = (): Promise<Released[]> => {
    if (running) {
      again = true;
      return running;
    }
    clearTimeout(timer);
    timer = undefined;
    armedFor = Infinity;
    running = (async () => {
      let released: Released[] = [];
      try {
        do {
          again = false;
          released = released.concat(await releaseDue(deps, { claiming: () => !stopped }));
        } while (again && !stopped);
      } catch (err) {
        log.warn('release pass failed; trying again at the next poll', { error: (err as Error).message });
      }
      // A release under way in a process that died is taken over when its lease ends, not at the next poll.
      const [next, claimed] = await Promise.all([
        deps.store.nextDue(WAITING_STATES, leaseMs(deps)).catch(() => null),
        deps.store.oldestRelease().catch(() => null),
      ]);
      running = undefined;
      arm(Math.min(next ?? Infinity, claimed === null ? Infinity : claimed + leaseMs(deps)));
      return released;
    })();
    return running;
  };

  function wake(dueAt: number): void {
    if (dueAt <= deps.now()) void pass();
    else arm(dueAt);
  }

  void pass();
  return {
    wake,
    tick: () => pass(),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
