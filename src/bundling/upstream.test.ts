import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../core/log.js';
import { Upstream } from './upstream.js';

/** A real stdio upstream whose `hang` tool never answers. */
const fixture = fileURLToPath(new URL('../../test/fixtures/stubborn-upstream.mjs', import.meta.url));

describe('Upstream.callTool: the call bound replaces the SDK request default (60 s)', () => {
  let upstream: Upstream | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await upstream?.close();
  });

  it('waits past 60 s when the bound is longer, and ends at the bound', async () => {
    upstream = new Upstream('slow', { command: process.execPath, args: [fixture], env: {} }, {
      log: silentLogger,
      hooks: { onTools: () => {}, onDown: () => {} },
      writeStderr: () => {},
    });
    await upstream.start();
    expect(upstream.connected).toBe(true);

    // Only the timers: the child process and its pipes keep running in real time.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let outcome: string | undefined;
    upstream.callTool('hang', {}, { timeoutMs: 120_000 }).then(
      () => (outcome = 'answered'),
      (err: Error) => (outcome = err.message),
    );
    await vi.advanceTimersByTimeAsync(61_000);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(59_000);
    expect(outcome).toMatch(/timed out/i);
  });
});
