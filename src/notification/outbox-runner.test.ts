/**
 * The release loop's wake-up (startOutboxRunner), with a stub store whose claim can be held
 * open: a due timer that fires while a pass is still running must not leave the loop unable
 * to arm a timer again (found by the soak, issue 24: every send scheduled after such a pass
 * stayed `scheduled` for good).
 */
import { describe, expect, it } from 'vitest';
import { FakeProvider, openTempStore, pipelineDeps, SMS_ENV } from '../../test/helpers/pipeline-kit.js';
import { silentLogger } from '../core/log.js';
import { waitingEntry } from '../store/types.js';
import { startOutboxRunner } from './outbox-runner.js';
import { leaseMs } from './outbox.js';
import type { PipelineDeps } from './pipeline.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('outbox runner wake-up', () => {
  it('arms again after a due timer fired during a slow pass', async () => {
    let claims = 0;
    let open!: () => void;
    const slow = new Promise<void>((r) => (open = r));
    const deps = {
      config: {
        sendBudgetMs: 1_000,
        approval: { rules: [] },
        time: { graceMs: 3_600_000, pollMs: 60_000, quietHours: [], urgent: 'deny' },
      },
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

  it('takes over a release another process left under way when its lease ends, not at the next poll', async () => {
    const store = await openTempStore('runner');
    const sms = new FakeProvider();
    const deps = await pipelineDeps({
      store,
      providers: { sms },
      env: { ...SMS_ENV, NOTIFY_SEND_BUDGET_MS: '500', NOTIFY_SCHEDULE_POLL_S: '600' },
    });
    const now = Date.now();
    await store.scheduleSend(
      waitingEntry({
        id: 'ntf_left',
        via: 'sms',
        client: 'bot',
        call: { via: 'sms', to: '+14155550123', body: 'x' },
        state: 'scheduled',
        send_at: now,
        due_at: now,
        created_at: now,
      }),
    );
    // Another process claimed it and died.
    expect((await store.claimDue(now, { limit: 10, owner: 'dead', leaseMs: leaseMs(deps), graceMs: 3_600_000 })).due).toHaveLength(1);
    const runner = startOutboxRunner(deps);
    try {
      // The lease is 2 s here; the poll is 10 minutes.
      for (let waited = 0; sms.payloads.length === 0 && waited < 6_000; waited += 50) await sleep(50);
      expect(sms.payloads).toHaveLength(1);
      expect(Date.now() - now).toBeGreaterThanOrEqual(leaseMs(deps));
      expect((await store.getOutboxEntry('ntf_left'))!.state).toBe('released');
    } finally {
      await runner.stop();
      await store.close();
    }
  });
});
