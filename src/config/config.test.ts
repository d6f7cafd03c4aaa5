import { describe, expect, it } from 'vitest';
import { CHANNELS } from '../channels/registry.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, environment, loadConfig, type Config } from './config.js';

const channel = (config: Config, name: string) => config.channels.find((c) => c.name === name)!;

describe('loadConfig', () => {
  it('runs every channel in dry-run with nothing set', () => {
    const c = loadConfig({ HOME: '/home/u' });
    expect(c.channels.map((ch) => [ch.name, ch.live])).toEqual(
      CHANNELS.filter((ch) => ch.name !== 'webhook').map((ch) => [ch.name, false]),
    );
    expect(c.dataDir).toBe('/home/u/.local/share/notify-mcp');
    expect(loadConfig({ XDG_DATA_HOME: '/x' }).dataDir).toBe('/x/notify-mcp');
    expect(c.defaultProfile).toBe('flat');
    expect(c.sendBudgetMs).toBe(20_000);
    expect(Object.isFrozen(c.http)).toBe(true);
    expect(Object.isFrozen(channel(c, 'email').settings)).toBe(true);
    expect(Object.isFrozen(c.channels)).toBe(true);
  });

  it.each([
    [{ SMTP_URL: 'smtp://127.0.0.1:25', EMAIL_FROM: 'a@b.co' }, 'NOTIFY_EMAIL_ALLOW'],
    [{ TWILIO_ACCOUNT_SID: 'AC1', TWILIO_AUTH_TOKEN: 't', TWILIO_FROM: '+1415' }, 'NOTIFY_SMS_ALLOW'],
    [{ SLACK_BOT_TOKEN: 'xoxb-1' }, 'NOTIFY_SLACK_ALLOW'],
  ])('refuses a live channel without its allowlist, naming the variable (%#)', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(variable);
    const name = variable === 'NOTIFY_EMAIL_ALLOW' ? 'email' : variable === 'NOTIFY_SMS_ALLOW' ? 'sms' : 'slack';
    expect(channel(loadConfig({ ...env, [variable]: '' }), name).allow).toEqual({ any: false, entries: [] });
  });

  it('keeps allowlist entries as written (Slack IDs are case-sensitive) and refuses one no matcher can read, naming it', () => {
    const slack = { SLACK_BOT_TOKEN: 'xoxb-1' };
    expect(channel(loadConfig({ ...slack, NOTIFY_SLACK_ALLOW: 'C0123ABCD, #Ops-Alerts,*' }), 'slack').allow).toEqual({
      any: true,
      entries: ['C0123ABCD', '#Ops-Alerts'],
    });
    expect(() => loadConfig({ ...slack, NOTIFY_SLACK_ALLOW: 'C0123ABCD,alerts' })).toThrow(
      'NOTIFY_SLACK_ALLOW: "alerts" is neither a channel ID nor a #name: write #alerts for the channel named alerts',
    );
    expect(() => loadConfig({ ...slack, NOTIFY_SLACK_ALLOW: 'c0123abcd' })).toThrow(/"c0123abcd".*upper case \(C0123ABCD\)/);
    // checked in dry-run too: the list is applied there as well
    expect(() => loadConfig({ NOTIFY_SLACK_ALLOW: 'general' })).toThrow(ConfigError);
    expect(() => loadConfig({ NOTIFY_EMAIL_ALLOW: 'example.com,*@partner.org' })).toThrow(
      'NOTIFY_EMAIL_ALLOW: "*@partner.org" is not a wildcard',
    );
    expect(() => loadConfig({ NOTIFY_SMS_ALLOW: '+1415,+1-800-FLOWERS' })).toThrow(
      'NOTIFY_SMS_ALLOW: "+1-800-FLOWERS" is not an E.164 prefix',
    );
  });

  it('names a refused value clipped, whatever its size (an --env-file line may hold a megabyte)', () => {
    const huge = 'a'.repeat(1_000_000);
    const cases: Record<string, string>[] = [
      { NOTIFY_EMAIL_ALLOW: huge },
      { NOTIFY_EMAIL_ALLOW: `"${huge}` },
      { NOTIFY_SMS_ALLOW: huge },
      { NOTIFY_SLACK_ALLOW: huge },
      { NOTIFY_APPROVAL: huge },
      { NOTIFY_RATE_LIMITS: huge },
      { NOTIFY_CLIENT_PROFILES: huge },
      { NOTIFY_DEFAULT_PROFILE: huge },
      { NOTIFY_FEED_ORIGINS: huge },
      { NOTIFY_LOG_LEVEL: huge },
      { NOTIFY_HTTP_TOKENS: `${huge}:short` },
      { NOTIFY_SEND_BUDGET_MS: huge },
      { NOTIFY_PUBLIC_URL: huge },
    ];
    for (const env of cases) {
      const message = (() => {
        try {
          loadConfig({ HOME: '/tmp', ...env });
        } catch (err) {
          return (err as Error).message;
        }
        return 'accepted';
      })();
      expect(message, Object.keys(env)[0]).toMatch(/\(100000[0-9] characters\)/);
      expect(message.length, Object.keys(env)[0]).toBeLessThan(700);
    }
  });

  it('reads NOTIFY_SLACK_ALLOW_BROADCAST as 1 or 0 (off unless set), and refuses anything else', () => {
    const allowBroadcast = (env: Record<string, string>) => channel(loadConfig(env), 'slack').settings;
    expect(allowBroadcast({})).toMatchObject({ allowBroadcast: false });
    expect(allowBroadcast({ NOTIFY_SLACK_ALLOW_BROADCAST: '0' })).toMatchObject({ allowBroadcast: false });
    expect(allowBroadcast({ NOTIFY_SLACK_ALLOW_BROADCAST: '1' })).toMatchObject({ allowBroadcast: true });
    expect(() => loadConfig({ NOTIFY_SLACK_ALLOW_BROADCAST: 'yes' })).toThrow(
      'NOTIFY_SLACK_ALLOW_BROADCAST must be 1 (on) or 0 (off), got "yes"',
    );
  });

  it('parses tokens, client profiles, rate limits and allowed hosts', () => {
    const c = loadConfig({
      NOTIFY_HTTP_TOKENS: 'ops:abcdefghijklmnop1234:nested, ci:ZZZZZZZZZZZZZZZZ',
      NOTIFY_CLIENT_PROFILES: 'ops-agent=oneOf,billing-bot=per-channel',
      NOTIFY_RATE_LIMITS: 'sms=20/h,*=300/d',
      NOTIFY_HTTP_ALLOWED_HOSTS: 'Notify.Example.com',
      NOTIFY_OPERATOR_CLIENTS: 'ops',
    });
    expect(c.http.operators).toEqual(['ops']);
    expect(c.http.tokens).toEqual([
      { client: 'ops', token: 'abcdefghijklmnop1234', profile: 'nested' },
      { client: 'ci', token: 'ZZZZZZZZZZZZZZZZ' },
    ]);
    expect(c.clientProfiles).toEqual({ 'ops-agent': 'oneOf', 'billing-bot': 'per-channel' });
    expect(c.rateLimits).toEqual([
      { via: 'sms', limit: 20, windowMs: 3_600_000 },
      { via: '*', limit: 300, windowMs: 86_400_000 },
    ]);
    expect(c.http.allowedHosts).toEqual(['notify.example.com']);
  });

  it("reads the feed settings: read-only tokens, CORS origins (normalised), the stream cap and a client's share of it", () => {
    const c = loadConfig({
      NOTIFY_FEED_TOKENS: 'web:feed-token-0123456789',
      NOTIFY_FEED_ORIGINS: 'https://App.Example.com, http://localhost:3000/',
      NOTIFY_FEED_MAX_STREAMS: '5000',
    });
    expect(c.feed).toEqual({
      tokens: [{ client: 'web', token: 'feed-token-0123456789' }],
      origins: ['https://app.example.com', 'http://localhost:3000'],
      maxStreams: 5000,
      streamsPerClient: 1250,
    });
    expect(loadConfig({}).feed).toEqual({ tokens: [], origins: [], maxStreams: 1000, streamsPerClient: 250 });
    expect(loadConfig({ NOTIFY_FEED_MAX_STREAMS: '3' }).feed.streamsPerClient).toBe(1);
    expect(loadConfig({ NOTIFY_FEED_CLIENT_STREAMS: '1000' }).feed.streamsPerClient).toBe(1000);
    expect(() => loadConfig({ NOTIFY_FEED_CLIENT_STREAMS: '1001' })).toThrow(
      /^NOTIFY_FEED_CLIENT_STREAMS \(1001\) is more than NOTIFY_FEED_MAX_STREAMS \(1000\)/,
    );
    expect(() => loadConfig({ NOTIFY_FEED_CLIENT_STREAMS: '0' })).toThrow(/^NOTIFY_FEED_CLIENT_STREAMS must be a positive integer/);
  });

  it.each([
    [{ NOTIFY_HTTP_TOKENS: 'ops:short' }, /must match/],
    [{ NOTIFY_HTTP_TOKENS: 'ops:abcdefghijklmnop1234,ci:abcdefghijklmnop1234' }, /"ops" and "ci" have the same token/],
    [{ NOTIFY_DEFAULT_PROFILE: 'fancy' }, /unknown profile/],
    [{ NOTIFY_RATE_LIMITS: 'sms=lots' }, /sms=20\/h/],
    [{ NOTIFY_RATE_LIMITS: 'mail=5/h' }, /^NOTIFY_RATE_LIMITS: "mail" is not a channel; use email, sms, slack, (.+, )?\*$/],
    [{ NOTIFY_SEND_BUDGET_MS: '-5' }, /positive integer/],
    [{ SLACK_API_URL: 'https://slack.com' }, /loopback/],
    // An operator is a token's client: a clientInfo name is self-reported.
    [{ NOTIFY_OPERATOR_CLIENTS: 'ops' }, /"ops" is no client of NOTIFY_HTTP_TOKENS/],
    [
      { NOTIFY_PUBLIC_URL: 'notify.example.com' },
      /NOTIFY_PUBLIC_URL must be the public base URL of this server, such as https:\/\/notify.example.com/,
    ],
    [{ NOTIFY_PUBLIC_URL: 'https://notify.example.com/?x=1' }, /NOTIFY_PUBLIC_URL must be/],
    [{ SMTP_URL: 'smtp://x' }, /EMAIL_FROM/],
    [{ NOTIFY_FEED_TOKENS: 'web:abcdefghijklmnop1234:nested' }, /NOTIFY_FEED_TOKENS: "web:…" must be name:token/],
    [{ NOTIFY_FEED_TOKENS: 'web:short' }, /NOTIFY_FEED_TOKENS: the token of "web" must match/],
    [
      { NOTIFY_HTTP_TOKENS: 'ops:abcdefghijklmnop1234', NOTIFY_FEED_TOKENS: 'web:abcdefghijklmnop1234' },
      /NOTIFY_FEED_TOKENS: "ops" and "web" have the same token/,
    ],
    [
      { NOTIFY_FEED_ORIGINS: 'https://app.example.com/page' },
      /NOTIFY_FEED_ORIGINS: "https:\/\/app.example.com\/page" is not an origin; list scheme:\/\/host\[:port\]/,
    ],
    [{ NOTIFY_FEED_ORIGINS: 'app.example.com' }, /is not an origin/],
    [{ NOTIFY_FEED_MAX_STREAMS: '0' }, /NOTIFY_FEED_MAX_STREAMS must be a positive integer/],
    // Past setTimeout's range a budget would fire after 1 ms.
    [{ NOTIFY_SEND_BUDGET_MS: '1e99' }, /NOTIFY_SEND_BUDGET_MS must be a positive integer up to 2147483647/],
    [{ NOTIFY_SEND_BUDGET_MS: '2147483648' }, /up to 2147483647/],
    [{ SMTP_URL: 'mail.example.com', EMAIL_FROM: 'a@b.co', NOTIFY_EMAIL_ALLOW: '*' }, /smtp:\/\/ or smtps:\/\//],
  ])('rejects bad values with a message that says what to set (%#)', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('accepts only PostgreSQL URLs in DATABASE_URL, and says which schemes and how to use SQLite instead', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@127.0.0.1/db' }).databaseUrl).toBe('postgres://u@127.0.0.1/db');
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@127.0.0.1/db' }).databaseUrl).toBe('postgresql://u@127.0.0.1/db');
    expect(() => loadConfig({ DATABASE_URL: 'mysql://u@db/x' })).toThrow(
      /^DATABASE_URL must start with postgres:\/\/ or postgresql:\/\/ .*not mysql:\/\/.*unset DATABASE_URL/,
    );
    expect(() => loadConfig({ DATABASE_URL: 'sqlite:///tmp/x.db' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_URL: 'db.example.com' })).toThrow(/^DATABASE_URL must be a PostgreSQL URL, e\.g\. postgres:\/\//);
  });

  it('reads a .env file when named, the process environment winning, and says what to do when it is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'notify-envfile-'));
    const file = join(dir, '.env');
    writeFileSync(file, '# comment\nNOTIFY_DEFAULT_PROFILE=nested\nNOTIFY_LOG_LEVEL="warn"\nPATH=/not/this\n');
    const env = environment(file);
    expect(loadConfig(env)).toMatchObject({ defaultProfile: 'nested', logLevel: 'warn' });
    expect(env.PATH).toBe(process.env.PATH);
    expect(() => environment(join(dir, 'missing.env'))).toThrow(
      /^--env-file .*missing\.env: cannot read it \(ENOENT\); copy \.env\.example/,
    );
    // A device or a directory: refused at once, not read without end.
    expect(() => environment('/dev/zero')).toThrow(/^--env-file \/dev\/zero: cannot read it \(not a regular file\)/);
    expect(() => environment(dir)).toThrow(/cannot read it \((not a regular file|EISDIR)\)/);
  });

  it('refuses at start a token client name a store cannot keep (U+0000, a lone surrogate), and a .env file holding U+0000', () => {
    const token = 'abcdefghijklmnop1234';
    for (const client of ['ali\u0000ce', 'bob\ud800', '\udc00']) {
      for (const [variable, value] of [
        ['NOTIFY_HTTP_TOKENS', `${client}:${token}`],
        ['NOTIFY_FEED_TOKENS', `${client}:${token}`],
      ]) {
        expect(() => loadConfig({ [variable!]: value })).toThrow(ConfigError);
        expect(() => loadConfig({ [variable!]: value })).toThrow(
          new RegExp(`^${variable}: the client name .* holds (U\\+0000|a lone surrogate)`),
        );
      }
    }
    const dir = mkdtempSync(join(tmpdir(), 'notify-envfile-nul-'));
    const file = join(dir, '.env');
    writeFileSync(file, `NOTIFY_HTTP_TOKENS=ali\u0000ce:${token}\n`);
    expect(() => environment(file)).toThrow(
      /^--env-file .*: the value of NOTIFY_HTTP_TOKENS holds U\+0000 \(NUL\) at position 3, which this server cannot store/,
    );
    writeFileSync(file, `SMTP_FROM="ops\u0000@example.com"\n`);
    expect(() => environment(file)).toThrow(/the value of SMTP_FROM holds U\+0000/);
  });
});
