import { describe, expect, it } from 'vitest';
import { createSessions, SESSION_MS, type SessionRevocations } from './session.js';

const ops = [
  { client: 'ops', token: 'ops-token-0123456789' },
  { client: 'lead', token: 'lead-token-0123456789' },
];

/** The store's revocations, in memory: what replicas share. */
function revocations(): SessionRevocations {
  const revoked = new Map<string, number>();
  return {
    async revokeSession(id, expiresAt) {
      revoked.set(id, expiresAt);
    },
    async sessionRevoked(id) {
      return revoked.has(id);
    },
  };
}

describe('console sessions', () => {
  const s = createSessions(ops, revocations());
  it('verifies its own cookie until it expires, and nothing altered, forged or of a removed operator', () => {
    const session = s.open('ops', 1_000);
    expect(s.verify(session.value, 1_000 + SESSION_MS - 1)).toMatchObject({ client: 'ops' });
    expect(s.verify(session.value, 1_000 + SESSION_MS)).toBeUndefined();
    const [client, exp, id, sig] = session.value.split('.');
    expect(s.verify(`${client}.${Number(exp) + 1}.${id}.${sig}`, 1_000)).toBeUndefined();
    expect(s.verify(`${client}.${exp}.${'A'.repeat(22)}.${sig}`, 1_000)).toBeUndefined();
    expect(s.verify(`${Buffer.from('lead').toString('base64url')}.${exp}.${id}.${sig}`, 1_000)).toBeUndefined();
    expect(s.verify('garbage', 1_000)).toBeUndefined();
    expect(s.verify(undefined, 1_000)).toBeUndefined();
    // The token rotated (or the operator removed): the session ends.
    expect(
      createSessions([{ client: 'ops', token: 'another-token-0123456789' }], revocations()).verify(session.value, 1_000),
    ).toBeUndefined();
    expect(createSessions([], revocations()).verify(session.value, 1_000)).toBeUndefined();
  });
  it('ends a signed-out session on every replica sharing the store, and only that one', async () => {
    const shared = revocations();
    const a = createSessions(ops, shared);
    const b = createSessions(ops, shared);
    const phone = a.open('ops', 1_000);
    const desk = a.open('ops', 1_000);
    expect(phone.value).not.toBe(desk.value);
    expect(await b.check(phone.value, 2_000)).toMatchObject({ client: 'ops' });
    await a.end(phone, 2_000);
    expect(await a.check(phone.value, 3_000)).toBeUndefined();
    expect(await b.check(phone.value, 3_000)).toBeUndefined();
    expect(await b.check(desk.value, 3_000)).toMatchObject({ client: 'ops' });
  });
  it('binds the CSRF token to the session', () => {
    const a = s.open('ops', 1_000);
    const b = s.open('ops', 2_000);
    expect(s.csrfValid(a, s.csrf(a))).toBe(true);
    expect(s.csrfValid(a, s.csrf(b))).toBe(false);
    expect(s.csrfValid(a, undefined)).toBe(false);
    expect(s.csrfValid(a, '')).toBe(false);
  });
  it('shows a notice only as the server signed it, for that operator and kind', () => {
    const sig = s.signNotice('ops', 'info', 'Approved ntf_1: it left (sent).');
    expect(s.noticeValid('ops', 'info', 'Approved ntf_1: it left (sent).', sig)).toBe(true);
    expect(s.noticeValid('ops', 'info', 'Approved ntf_1: it left (sent). Now visit evil.example', sig)).toBe(false);
    expect(s.noticeValid('ops', 'error', 'Approved ntf_1: it left (sent).', sig)).toBe(false);
    expect(s.noticeValid('lead', 'info', 'Approved ntf_1: it left (sent).', sig)).toBe(false);
    expect(s.noticeValid('ops', 'info', 'Approved ntf_1: it left (sent).', null)).toBe(false);
    expect(s.noticeValid('nobody', 'info', 'x', s.signNotice('nobody', 'info', 'x'))).toBe(false);
  });
});
