import { describe, expect, it } from 'vitest';
import { blockedAddress, type Resolve } from './address.js';
import { checkWebhooks } from './check.js';
import type { WebhookTarget } from './targets.js';

const dns =
  (answers: Record<string, string[]>): Resolve =>
  (host, callback) =>
    answers[host]
      ? callback(
          null,
          answers[host].map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        )
      : callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), []);

const target = (name: string, url: string): WebhookTarget => ({ name, format: 'discord', url });

describe('webhook doctor', () => {
  it('passes a public host, fails a private one (unless listed) and one that does not resolve; posts nothing', async () => {
    const checks = await checkWebhooks(
      {
        targets: [
          target('pub', 'https://hooks.example.com/a'),
          target('priv', 'https://intranet.example.com/a'),
          target('listed', 'https://listed.example.com/a'),
          target('gone', 'https://gone.example.com/a'),
        ],
        privateHosts: ['listed.example.com'],
      },
      { timeoutMs: 1000 },
      dns({ 'hooks.example.com': ['93.184.215.14'], 'intranet.example.com': ['10.0.0.8'], 'listed.example.com': ['192.168.1.2'] }),
    );
    expect(checks.map((c) => [c.name, c.ok])).toEqual([
      ['webhook target pub', true],
      ['webhook target priv', false],
      ['webhook target listed', true],
      ['webhook target gone', false],
    ]);
    expect(checks[1]!.detail).toContain('10.0.0.8, a private address');
    expect(checks[1]!.fix).toContain('NOTIFY_WEBHOOK_PRIVATE_HOSTS');
  });
});

describe('blockedAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.20.30.40', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'shared (carrier NAT)'],
    ['0.0.0.0', 'unspecified'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd00::1', 'private'],
    ['fe80::1', 'link-local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
  ])('%s is %s', (address, kind) => expect(blockedAddress(address)).toBe(kind));

  it.each(['93.184.215.14', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])('%s is public', (address) =>
    expect(blockedAddress(address)).toBeUndefined(),
  );
});
