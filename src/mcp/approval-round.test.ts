/**
 * approvalRound's own promises, on the server and request context it reads: who may answer
 * (only the client the question was put to), who can be asked (form elicitation only), and
 * that a state's life is bounded (the codec refuses it after APPROVAL_TTL_S).
 */
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { APPROVAL_TTL_S, approvalRound, createApprovalCodec, OpenQuestions, type ApprovalState } from './approval-round.js';

const STATE: ApprovalState = { v: 1, id: 'ntf_1', at: 1000, payload_sha256: 'ab'.repeat(32), key: null, client: 'bot' };
const ACCEPT = { approval: { action: 'accept', content: { approve: true } } };

function round(opts: { elicitation?: object; state?: unknown; responses?: unknown; client?: string | null }) {
  const server = {
    getClientCapabilities: () => (opts.elicitation === undefined ? {} : { elicitation: opts.elicitation }),
  } as unknown as Server;
  const ctx = {
    mcpReq: { envelope: undefined, requestState: () => opts.state, inputResponses: opts.responses },
  } as unknown as ServerContext;
  return approvalRound(server, ctx, opts.client === undefined ? 'bot' : opts.client);
}

afterEach(() => vi.useRealTimers());

describe('approvalRound', () => {
  it('reads an accept of the state put to this client', () => {
    expect(round({ elicitation: { form: {} }, state: STATE, responses: ACCEPT })).toEqual({
      canAsk: true,
      previous: { grant: { id: 'ntf_1', at: 1000, payload_sha256: STATE.payload_sha256, key: null }, answer: 'accept' },
    });
  });

  it('ignores a signed answer brought by another client', () => {
    for (const client of ['other', null, 'bot ']) {
      expect(round({ elicitation: { form: {} }, state: STATE, responses: ACCEPT, client }), String(client)).toEqual({ canAsk: true });
    }
  });

  it('can ask with form elicitation (or the empty capability of 2025-06-18), not with URL-only', () => {
    expect(round({ elicitation: { url: {} } }).canAsk).toBe(false);
    expect(round({ elicitation: { url: {}, form: {} } }).canAsk).toBe(true);
    expect(round({ elicitation: {} }).canAsk).toBe(true);
    expect(round({}).canAsk).toBe(false);
  });

  it('reads anything but an approve: true accept as a decline', () => {
    for (const responses of [
      { approval: { action: 'decline' } },
      { approval: { action: 'cancel' } },
      { approval: { action: 'accept', content: { approve: false } } },
      { approval: { action: 'accept' } },
    ]) {
      expect(round({ elicitation: { form: {} }, state: STATE, responses }).previous?.answer, JSON.stringify(responses)).toBe('decline');
    }
  });
});

describe('the approval state codec', () => {
  it(`refuses a state older than ${APPROVAL_TTL_S} s, and one signed with another key`, async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const codec = createApprovalCodec('k'.repeat(32));
    const minted = await codec.mint(STATE);
    const ctx = {} as never;
    await expect(codec.verify(minted, ctx)).resolves.toMatchObject({ id: 'ntf_1', client: 'bot' });
    vi.setSystemTime(1_800_000_000_000 + (APPROVAL_TTL_S - 5) * 1000);
    await expect(codec.verify(minted, ctx)).resolves.toMatchObject({ id: 'ntf_1' });
    vi.setSystemTime(1_800_000_000_000 + (APPROVAL_TTL_S + 5) * 1000);
    await expect(codec.verify(minted, ctx)).rejects.toThrow();
    vi.setSystemTime(1_800_000_000_000);
    await expect(createApprovalCodec('j'.repeat(32)).verify(minted, ctx)).rejects.toThrow();
  });
});

describe('OpenQuestions', () => {
  it('bounds questions per session and per client, and frees a place at the answer, a cancel, the end of the session or the TTL', () => {
    vi.useFakeTimers();
    const q = new OpenQuestions({ perSession: 2, perClient: 3, ttlMs: 10_000 });
    const a = q.session();
    const b = q.session();
    const cancel = new AbortController();
    expect(a.take(1, 'bot', cancel.signal)).toBeUndefined();
    expect(a.take(2, 'bot', undefined)).toBeUndefined();
    expect(a.take(3, 'bot', undefined)).toMatchObject({ code: 'RATE_LIMITED', details: { retryAfterS: 30 } });
    expect(b.take(1, 'bot', undefined)).toBeUndefined();
    expect(b.take(2, 'bot', undefined)?.message).toContain('client bot has 3 open');
    expect(b.take(2, 'other', undefined)).toBeUndefined();
    expect(q.openFor('bot')).toBe(3);
    a.answered(2);
    expect(q.openFor('bot')).toBe(2);
    cancel.abort();
    expect(q.openFor('bot')).toBe(1);
    // The same call asking again (a changed message) holds one place, not two.
    expect(a.take(4, 'bot', undefined)).toBeUndefined();
    expect(a.take(4, 'bot', undefined)).toBeUndefined();
    expect(a.size).toBe(1);
    b.closeAll();
    expect(q.openFor('other')).toBe(0);
    vi.advanceTimersByTime(11_001);
    expect(q.openFor('bot')).toBe(0);
    expect(a.size).toBe(0);
  });
});
