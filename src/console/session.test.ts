import { describe, expect, it } from 'vitest';
import { createSessions, SESSION_MS } from './session.js';

const ops = [{ client: 'ops', token: 'ops-token-0123456789' }, { client: 'lead', token: 'lead-token-0123456789' }];

describe('console sessions', () => {
  const s = createSessions(ops);
  it('verifies its own cookie until it expires, and nothing altered, forged or of a removed operator', () => {
    const session = s.open('ops', 1_000);
    expect(s.verify(session.value, 1_000 + SESSION_MS - 1)).toMatchObject({ client: 'ops' });
    expect(s.verify(session.value, 1_000 + SESSION_MS)).toBeUndefined();
    const [client, exp, sig] = session.value.split('.');
    expect(s.verify(`${client}.${Number(exp) + 1}.${sig}`, 1_000)).toBeUndefined();
    expect(s.verify(`${Buffer.from('lead').toString('base64url')}.${exp}.${sig}`, 1_000)).toBeUndefined();
    expect(s.verify('garbage', 1_000)).toBeUndefined();
    expect(s.verify(undefined, 1_000)).toBeUndefined();
    // The token rotated (or the operator removed): the session ends.
    expect(createSessions([{ client: 'ops', token: 'another-token-0123456789' }]).verify(session.value, 1_000)).toBeUndefined();
    expect(createSessions([]).verify(session.value, 1_000)).toBeUndefined();
  });
  it('binds the CSRF token to the session', () => {
    const a = s.open('ops', 1_000);
    const b = s.open('ops', 2_000);
    expect(s.csrfValid(a, s.csrf(a))).toBe(true);
    expect(s.csrfValid(a, s.csrf(b))).toBe(false);
    expect(s.csrfValid(a, undefined)).toBe(false);
    expect(s.csrfValid(a, '')).toBe(false);
  });
});
