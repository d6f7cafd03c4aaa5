/**
 * The release loop's wake-up (startOutboxRunner), with a stub store whose claim can be held
 * open: a due timer that fires while a pass is still running must not leave the loop unable
 * to arm a timer again (found by the soak, issue 24: every send scheduled after such a pass
 * stayed `scheduled` for good).
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../core/log.js';
import { startOutboxRunner } from './outbox.js';
import type { PipelineDeps } from './pipeline.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('outbox runner wake-up', () => {
  it('arms again after a due timer fired during a slow pass', async () => {
    let claims = 0;
    let open!: () => void;
    const slow = new Promise<void>((r) => (open = r));
    const deps = {
      config: { sendBudgetMs: 1_000, approval: { rules: [] }, time: { graceMs: 3_600_000, pollMs: 60_000, quietHours: [], urgent: 'deny' } },
      channels: [],
      log: silentLogger,
      now: () => Date.now(),
      store: {
        // The first pass is slow (a provider call hanging within its budget); later ones find nothing due.
        claimDue: async () => {
          claims++;
          if (claims === 1) await slow;
          return { due: [], expired: [] };
        },
        nextDue: async () => null,
        oldestRelease: async () => null,
        recordReleases: async () => [],
      },
    } as unknown as PipelineDeps;
    const runner = startOutboxRunner(deps);
    try {
      // Due while the first pass runs: its timer fires into the running pass.
      runner.wake(Date.now() + 20);
      await sleep(300);
      open();
      await sleep(100);
      const before = claims;
      // A send scheduled afterwards must get a pass at its due time, not at the next 60 s poll
      // (waited for up to 5 s, so a loaded machine's late timers do not fail it).
      runner.wake(Date.now() + 20);
      for (let waited = 0; claims === before && waited < 5_000; waited += 20) await sleep(20);
      expect(claims).toBeGreaterThan(before);
    } finally {
      await runner.stop();
    }
  });
});
