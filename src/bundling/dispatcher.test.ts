import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/server';
import {
  BundleManager,
  createDispatcher,
  DEFAULT_CALL_TIMEOUT_MS,
  reconcile,
  type CallUpstream,
  type Tool,
  type UpstreamCallOptions,
} from './index.js';

const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } });
const textOf = (r: CallToolResult) => (r.content[0] as { text: string }).text;

/** An upstream that never answers and ignores its signal: the worst a server can do. */
function hungUpstream() {
  const seen: UpstreamCallOptions[] = [];
  const callUpstream: CallUpstream = (_target, _args, options) => {
    seen.push(options);
    return new Promise<CallToolResult>(() => {});
  };
  return { seen, callUpstream };
}

/** The call's outcome once settled, else undefined (without waiting for it). */
function track(p: Promise<CallToolResult>): () => CallToolResult | undefined {
  let out: CallToolResult | undefined;
  void p.then((r) => (out = r));
  return () => out;
}

describe('createDispatcher: every call is bounded', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  const bundles = [
    { serverId: 'slow', tools: [tool('wait')] },
    { serverId: 'other', tools: [tool('other_wait')] },
  ];

  it('ends a hung call as an error result at the per-call timeoutMs, and aborts the upstream signal', async () => {
    const up = hungUpstream();
    const d = createDispatcher(reconcile(bundles), up.callUpstream);
    const result = track(d.call('wait', {}, { timeoutMs: 250 }));
    await vi.advanceTimersByTimeAsync(249);
    expect(result()).toBeUndefined();
    expect(up.seen[0]!.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(result()).toMatchObject({ isError: true });
    expect(textOf(result()!)).toBe(
      'Tool "wait" timed out after 250 ms on server "slow"; it may still complete there. ' + 'Try again later, or with a longer timeout.',
    );
    expect(up.seen[0]!.signal.aborted).toBe(true);
    expect(up.seen[0]!.timeoutMs).toBe(250);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('defaults to 60 s, the MCP SDK request default', async () => {
    expect(DEFAULT_CALL_TIMEOUT_MS).toBe(60_000);
    const d = createDispatcher(reconcile(bundles), hungUpstream().callUpstream);
    const result = track(d.call('wait'));
    await vi.advanceTimersByTimeAsync(59_999);
    expect(result()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(textOf(result()!)).toContain('timed out after 60000 ms');
  });

  it('takes the bound from the call, else the server, else the dispatcher default', async () => {
    const up = hungUpstream();
    const d = createDispatcher(reconcile(bundles), up.callUpstream, {
      defaultTimeoutMs: 1000,
      serverTimeoutMs: (id) => (id === 'slow' ? 5000 : undefined),
    });
    void d.call('wait');
    void d.call('other_wait');
    void d.call('wait', {}, { timeoutMs: 20 });
    expect(up.seen.map((o) => o.timeoutMs)).toEqual([]); // the upstream is called on the next tick
    await vi.advanceTimersByTimeAsync(0);
    expect(up.seen.map((o) => o.timeoutMs)).toEqual([5000, 1000, 20]);
    await vi.advanceTimersByTimeAsync(5000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ends at once when the caller cancels, even if the upstream ignores the signal', async () => {
    const up = hungUpstream();
    const d = createDispatcher(reconcile(bundles), up.callUpstream);
    const controller = new AbortController();
    const result = track(d.call('wait', {}, { signal: controller.signal }));
    await vi.advanceTimersByTimeAsync(10);
    controller.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(result()).toEqual({ isError: true, content: [{ type: 'text', text: 'Tool "wait" was cancelled.' }] });
    expect(up.seen[0]!.signal.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);

    const already = await d.call('wait', {}, { signal: controller.signal });
    expect(textOf(already)).toBe('Tool "wait" was cancelled before it was sent.');
    expect(up.seen).toHaveLength(1);
  });

  it('a fast answer clears its timer; an upstream that honours the signal still reads as a timeout', async () => {
    const d = createDispatcher(reconcile(bundles), async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    expect(textOf(await d.call('wait'))).toBe('ok');
    expect(vi.getTimerCount()).toBe(0);

    // Rejecting with its own error when the signal aborts (as the SDK client does).
    const honours = createDispatcher(
      reconcile(bundles),
      (_t, _a, { signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('Request aborted')))),
    );
    const result = track(honours.call('wait', {}, { timeoutMs: 100 }));
    await vi.advanceTimersByTimeAsync(100);
    expect(textOf(result()!)).toContain('timed out after 100 ms');
  });

  it('refuses a bound that is not a positive number, without calling the upstream', async () => {
    const up = hungUpstream();
    const d = createDispatcher(reconcile(bundles), up.callUpstream);
    for (const bad of [0, -1, Number.NaN]) {
      const r = await d.call('wait', {}, { timeoutMs: bad });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain('timeoutMs must be a positive number');
    }
    expect(up.seen).toHaveLength(0);
    expect(() => createDispatcher(reconcile(bundles), up.callUpstream, { defaultTimeoutMs: 0 })).toThrow(RangeError);
  });
});

describe('BundleManager with a hung upstream', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('applies the pending list when the hung call times out', async () => {
    const m = new BundleManager({ ...hungUpstream(), defaultTimeoutMs: 1000 });
    m.register('slow', [tool('wait')]);
    const result = track(m.call('wait'));
    m.register('late', [tool('new_tool')]);
    expect(m.pending).toBe(true);
    await vi.advanceTimersByTimeAsync(1000);
    expect(textOf(result()!)).toContain('timed out after 1000 ms');
    expect(m.pending).toBe(false);
    expect(m.current.reconciled.tools.map((t) => t.name)).toEqual(['new_tool', 'wait']);
  });

  it('passes a per-server bound through', async () => {
    const up = hungUpstream();
    const m = new BundleManager({ ...up, serverTimeoutMs: () => 42 });
    m.register('slow', [tool('wait')]);
    const result = track(m.call('wait'));
    await vi.advanceTimersByTimeAsync(42);
    expect(textOf(result()!)).toContain('timed out after 42 ms');
  });
});
