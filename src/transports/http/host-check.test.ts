import { describe, expect, it } from 'vitest';
import { createAuthenticator } from './auth.js';
import { createHostPolicy, isLoopbackHost } from './host-check.js';

describe('createHostPolicy', () => {
  it('on loopback: accepts the loopback forms with the bound port, nothing else', () => {
    const p = createHostPolicy({ host: '127.0.0.1', port: 8787 });
    for (const h of ['127.0.0.1:8787', 'localhost:8787', 'LOCALHOST:8787', '[::1]:8787']) expect(p.hostAllowed(h), h).toBe(true);
    for (const h of [
      'evil.example.com:8787',
      'localhost:8788',
      'localhost',
      '127.0.0.1:8787.evil',
      '',
      undefined,
      '10.0.0.5:8787',
      'localhost.evil.com:8787',
    ]) {
      expect(p.hostAllowed(h), String(h)).toBe(false);
    }
  });

  it('checks Origin: absent passes, same host and port passes, anything else fails', () => {
    const p = createHostPolicy({ host: '127.0.0.1', port: 8787 });
    expect(p.originAllowed(undefined)).toBe(true);
    expect(p.originAllowed('http://localhost:8787')).toBe(true);
    expect(p.originAllowed('http://[::1]:8787')).toBe(true);
    expect(p.originAllowed('http://localhost:3000')).toBe(false);
    expect(p.originAllowed('http://evil.example.com:8787')).toBe(false);
    expect(p.originAllowed('null')).toBe(false);
    expect(p.originAllowed('file://')).toBe(false);
  });

  it('bound to every interface: IP literals pass (rebinding needs a name), names only when listed', () => {
    const p = createHostPolicy({ host: '0.0.0.0', port: 80 }, ['notify.internal.example']);
    expect(p.hostAllowed('10.1.2.3')).toBe(true);
    expect(p.hostAllowed('10.1.2.3:80')).toBe(true);
    expect(p.hostAllowed('[fd00::1]:80')).toBe(true);
    expect(p.hostAllowed('notify.internal.example')).toBe(true);
    expect(p.originAllowed('https://notify.internal.example')).toBe(true);
    expect(p.hostAllowed('attacker.example')).toBe(false);
    expect(p.hostAllowed('10.1.2.3:8080')).toBe(false);
  });

  it('bound to a named address: that address passes too', () => {
    const p = createHostPolicy({ host: '192.0.2.10', port: 9000 });
    expect(p.hostAllowed('192.0.2.10:9000')).toBe(true);
    expect(p.hostAllowed('192.0.2.11:9000')).toBe(false);
  });

  it('isLoopbackHost', () => {
    for (const h of ['127.0.0.1', '127.8.9.1', 'localhost', '::1', '[::1]']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '192.168.1.2', 'example.com']) expect(isLoopbackHost(h), h).toBe(false);
  });
});

describe('createAuthenticator', () => {
  const auth = createAuthenticator([
    { client: 'a', token: 'aaaaaaaaaaaaaaaa1' },
    { client: 'b', token: 'bbbbbbbbbbbbbbbb2', profile: 'nested' },
  ]);

  it('finds the client and profile of a configured token', () => {
    expect(auth.required).toBe(true);
    expect(auth.check('Bearer bbbbbbbbbbbbbbbb2')).toEqual({
      ok: true,
      token: { client: 'b', token: 'bbbbbbbbbbbbbbbb2', profile: 'nested' },
    });
    expect(auth.check('bearer aaaaaaaaaaaaaaaa1')).toMatchObject({ ok: true, token: { client: 'a' } });
  });

  it('tells a missing credential from a wrong one', () => {
    expect(auth.check(undefined)).toEqual({ ok: false, reason: 'missing' });
    expect(auth.check('Basic YTpi')).toEqual({ ok: false, reason: 'missing' });
    expect(auth.check('Bearer aaaaaaaaaaaaaaaa')).toEqual({ ok: false, reason: 'invalid' });
    expect(auth.check('Bearer aaaaaaaaaaaaaaaa1x')).toEqual({ ok: false, reason: 'invalid' });
    expect(auth.check('Bearer x')).toEqual({ ok: false, reason: 'invalid' });
  });

  it('requires nothing when no tokens are configured', () => {
    expect(createAuthenticator([]).required).toBe(false);
  });
});
