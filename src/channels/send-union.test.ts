/** The notification union's rules and the messages a model reads when it breaks them. */
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../core/log.js';
import { listWords, profileTools, validateUnionCall } from '@notify-mcp/union';
import { CHANNELS } from './registry.js';
import { loadConfig } from '../config/config.js';
import { notificationDef } from './send-union.js';

const defFor = (env: Record<string, string>) => notificationDef(loadConfig({ NOTIFY_DATA_DIR: '/x', ...env }).channels);
const one = defFor({});
const issues = (call: unknown, def = one) => {
  const r = validateUnionCall(def, {}, call);
  return r.ok ? [] : r.issues.map(({ code, path, message }) => ({ code, path, message }));
};

describe('notification union', () => {
  it('answers an SMS with a subject: the field, the channel, its limit, and both fixes', () => {
    expect(issues({ via: 'sms', to: '+14155550123', body: 'Down', subject: 'Outage' })).toEqual([
      {
        code: 'FIELD_NOT_ON_CHANNEL',
        path: '/subject',
        message:
          'Drop subject, or set via to email: sms takes to (matching ^\\+[1-9]\\d{1,14}$, e.g. +14155550123), body (fits 160 GSM-7 characters, or 70 with emoji or non-Latin) and media_urls (MMS: ≤10 https URLs on NOTIFY_SMS_MEDIA_HOSTS (none yet)) only.',
      },
    ]);
  });

  it('under per-channel, names the tool to call, generated from the profile, never "set via"', () => {
    const tools = profileTools(one, 'per-channel');
    const sms = tools.find((t) => t.name === 'send_sms')!;
    const r = validateUnionCall(one, sms.binding, { to: '+14155550123', body: 'Down', subject: 'Outage', reply_to: 'a@example.com' });
    const messages = r.ok ? [] : r.issues.map((i) => i.message);
    expect(messages[0]).toMatch(/^Drop subject, or call send_email: sms takes /);
    expect(messages.join(' ')).not.toContain('set via');
  });

  it("starts a format problem with what to do and an example; zod's text never leads; nested places read as their JSON Pointer", () => {
    const [phone] = issues({ via: 'sms', to: '12345', body: 'Down' });
    expect(phone!.message).toBe('Fix to: use E.164 number (matching ^\\+[1-9]\\d{1,14}$, e.g. +14155550123); "12345" does not match.');
    const [address] = issues({ via: 'email', to: ['ok@example.com', 'nope'], subject: 's', body_html: 'h' });
    expect(address).toEqual({
      code: 'INVALID_FIELD',
      path: '/to/1',
      message: 'Fix /to/1: use an email address, e.g. ops@example.com or Jane Doe <jane@example.com>; "nope" is not one.',
    });
    for (const call of [
      { via: 'slack', channel: 'general', text: 't' },
      { via: 'slack', channel: 'C0123ABCD', text: 't', thread: 'x' },
    ]) {
      const [issue] = issues(call);
      expect(issue!.message).toMatch(/^Fix \w+: use .*e\.g\. /);
      expect(issue!.message).not.toMatch(/Invalid|must match pattern|to\.1/);
    }
  });

  it('reports the branch that matched: 51 recipients are too many, not "invalid input"', () => {
    const to = Array.from({ length: 51 }, (_, i) => `a${i}@example.com`);
    expect(issues({ via: 'email', to, subject: 's', body_html: 'h' })).toEqual([
      { code: 'TOO_LONG', path: '/to', message: 'Shorten to: email takes at most 50 items.' },
    ]);
    expect(issues({ via: 'email', to: ['ok@example.com', 'nope'], subject: 's', body_html: 'h' })[0]).toMatchObject({
      code: 'INVALID_FIELD',
      path: '/to/1',
    });
    // Longer than an address may be, too: still the list's problem.
    expect(issues({ via: 'email', to: Array(300).fill('nope'), subject: 's', body_html: 'h' })[0]).toMatchObject({
      code: 'TOO_LONG',
      path: '/to',
    });
  });

  it('takes addresses up to the 254 characters of RFC 5321, in to and reply_to', () => {
    const longest = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(53)}.example`;
    expect(longest).toHaveLength(254);
    expect(issues({ via: 'email', to: [longest], reply_to: longest, subject: 's', body_html: 'h' })).toEqual([]);
    const over = `x${longest}`;
    expect(issues({ via: 'email', to: ['ok@example.com', over], subject: 's', body_html: 'h' })).toEqual([
      { code: 'TOO_LONG', path: '/to/1', message: 'Shorten /to/1: an address takes at most 254 characters (RFC 5321).' },
    ]);
    expect(issues({ via: 'email', to: 'ok@example.com', reply_to: over, subject: 's', body_html: 'h' })[0]).toMatchObject({
      code: 'TOO_LONG',
      path: '/reply_to',
    });
  });

  it('gives an SMS length problem one message, with the encoding, and honours the segment setting', () => {
    expect(issues({ via: 'sms', to: '+14155550123', body: '€'.repeat(81) })).toEqual([
      {
        code: 'TOO_LONG',
        path: '/body',
        message: expect.stringContaining('Shorten body: 1 segment allows 160 GSM-7 characters, and it has 162'),
      },
    ]);
    const three = defFor({ NOTIFY_SMS_MAX_SEGMENTS: '3' });
    expect(issues({ via: 'sms', to: '+14155550123', body: 'a'.repeat(459) }, three)).toEqual([]);
    expect(issues({ via: 'sms', to: '+14155550123', body: 'a'.repeat(460) }, three)[0]!.code).toBe('TOO_LONG');
    expect(three.variants.find((v) => v.value === 'sms')!.limits.body).toBe(
      'fits 3 segments: 459 GSM-7 characters, or 201 with emoji or non-Latin',
    );
  });

  it('checks Slack channels and thread timestamps', () => {
    expect(issues({ via: 'slack', channel: 'general', text: 'x' })[0]).toMatchObject({ code: 'INVALID_FIELD', path: '/channel' });
    expect(issues({ via: 'slack', channel: 'G01ABCDEF', text: 'x', thread: '1712345678.123456' })).toEqual([]);
    expect(issues({ via: 'slack', channel: '#ops', text: 'x', thread: '1712345678' })[0]).toMatchObject({ path: '/thread' });
  });

  it('names the channels when via is missing or unknown', () => {
    const names = listWords(
      CHANNELS.filter((c) => c.name !== 'webhook').map((c) => c.name),
      'or',
    ); // email, sms or slack
    expect(issues({ to: 'x' })).toEqual([{ code: 'INVALID_VIA', path: '/via', message: `Set via to ${names}: it is required.` }]);
    expect(issues({ via: 'fax' })[0]!.message).toBe(`Set via to ${names}: "fax" is not a channel.`);
  });

  it('hands the pipeline the call the union parsed, without parsing it again; anything else is parsed', async () => {
    const config = loadConfig({ NOTIFY_DATA_DIR: '/x' });
    const configured = config.channels.find((c) => c.name === 'sms')!;
    const def = notificationDef(config.channels);
    const connected = await configured.connect({ log: silentLogger, maxConcurrent: 1, requestTimeoutMs: 1_000 });
    const checked = validateUnionCall(def, {}, { via: 'sms', to: '+14155550123', body: 'Down' });
    if (!checked.ok) throw new Error('valid call refused');
    const parse = vi.spyOn(configured.branch, 'parse');
    connected.open((typed) => {
      expect(typed.parse(checked.value)).toBe(checked.value);
      expect(parse).not.toHaveBeenCalled();
      // A copy, or a value no validation returned, is parsed (and refused when invalid).
      expect(typed.parse({ ...checked.value })).toEqual(checked.value);
      expect(() => typed.parse({ via: 'sms', to: 'nope', body: 'Down' })).toThrow();
      expect(parse).toHaveBeenCalledTimes(2);
    });
  });
});

describe('email cc, bcc and display names', () => {
  it('takes a display name on every address field, and judges the address inside', () => {
    expect(
      issues({
        via: 'email',
        to: 'Jane Doe <jane@example.com>',
        cc: ['"Ops, Team" <ops@example.com>'],
        bcc: ['Audit <audit@example.com>'],
        reply_to: 'Replies <r@example.com>',
        subject: 's',
        body_html: 'h',
      }),
    ).toEqual([]);
    const [two] = issues({ via: 'email', to: 'ok@example.com', cc: ['a@example.com, b@attacker.example'], subject: 's', body_html: 'h' });
    expect(two).toMatchObject({ code: 'INVALID_FIELD', path: '/cc/0' });
    expect(two!.message).toMatch(/^Fix \/cc\/0: .*more than one address/);
    expect(issues({ via: 'email', to: 'Jane <not-an-address>', subject: 's', body_html: 'h' })[0]).toMatchObject({
      code: 'INVALID_FIELD',
      path: '/to',
    });
  });

  it('counts to, cc and bcc together against the recipient cap', () => {
    const list = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}@example.com`);
    expect(issues({ via: 'email', to: list(20, 't'), cc: list(20, 'c'), bcc: list(10, 'b'), subject: 's', body_html: 'h' })).toEqual([]);
    const [over] = issues({ via: 'email', to: list(20, 't'), cc: list(20, 'c'), bcc: list(11, 'b'), subject: 's', body_html: 'h' });
    expect(over).toMatchObject({ code: 'TOO_LONG', path: '/bcc' });
    expect(over!.message).toMatch(/51 recipients.*at most 50 \(NOTIFY_EMAIL_MAX_RECIPIENTS\)/);
    const small = defFor({ NOTIFY_EMAIL_MAX_RECIPIENTS: '2' });
    expect(
      issues({ via: 'email', to: 'a@example.com', cc: ['b@example.com'], bcc: ['c@example.com'], subject: 's', body_html: 'h' }, small)[0],
    ).toMatchObject({ code: 'TOO_LONG' });
  });

  it('refuses attachments on SMS and Slack as fields not on the channel, with advice', () => {
    const [sms] = issues({ via: 'sms', to: '+14155550123', body: 'x', attachments: [{ filename: 'a.txt', content_base64: 'aGk=' }] });
    expect(sms).toMatchObject({ code: 'FIELD_NOT_ON_CHANNEL', path: '/attachments' });
    expect(sms!.message).toMatch(/^Drop attachments, or set via to email/);
  });
});

describe('SMS media_urls (MMS)', () => {
  const mms = (media_urls: unknown) => ({ via: 'sms', to: '+14155550123', body: 'see', media_urls });
  it('is refused with advice until the operator names hosts', () => {
    const [issue] = issues(mms(['https://cdn.example.com/a.png']));
    expect(issue).toMatchObject({ code: 'INVALID_FIELD', path: '/media_urls/0' });
    expect(issue!.message).toMatch(/NOTIFY_SMS_MEDIA_HOSTS lists none/);
  });
  it('takes https URLs on the listed hosts only', () => {
    const def = defFor({ NOTIFY_SMS_MEDIA_HOSTS: 'cdn.example.com' });
    expect(issues(mms(['https://cdn.example.com/a.png', 'https://cdn.example.com/b.jpg?x=1']), def)).toEqual([]);
    expect(issues(mms(['http://cdn.example.com/a.png']), def)[0]!.message).toMatch(/is not https/);
    expect(issues(mms(['https://evil.example/a.png']), def)[0]!.message).toMatch(
      /evil\.example, which NOTIFY_SMS_MEDIA_HOSTS does not list/,
    );
    expect(issues(mms(['https://cdn.example.com.evil.example/a.png']), def)[0]).toMatchObject({ code: 'INVALID_FIELD' });
    expect(issues(mms(['https://u:p@cdn.example.com/a.png']), def)[0]!.message).toMatch(/credentials/);
    expect(issues(mms(Array(11).fill('https://cdn.example.com/a.png')), def)[0]).toMatchObject({ code: 'TOO_LONG', path: '/media_urls' });
    expect(() => defFor({ NOTIFY_SMS_MEDIA_HOSTS: 'https://cdn.example.com/' })).toThrow(/NOTIFY_SMS_MEDIA_HOSTS/);
  });
  it('takes a URL only as the WHATWG parser writes it, so no other fetcher reads another host in it', () => {
    const def = defFor({ NOTIFY_SMS_MEDIA_HOSTS: 'cdn.example.com' });
    // curl and Python's urllib read evil.example as the host of the first two; WHATWG reads cdn.example.com.
    for (const [url, href] of [
      ['https://cdn.example.com\\@evil.example/x.png', 'https://cdn.example.com/@evil.example/x.png'],
      ['https://cdn.example.com\\\\@evil.example/x.png', 'https://cdn.example.com//@evil.example/x.png'],
      ['https:\\\\cdn.example.com\\x.png', 'https://cdn.example.com/x.png'],
      ['https://CDN.example.com/x.png', 'https://cdn.example.com/x.png'],
      ['https://cdn.example.com:443/a/../x.png', 'https://cdn.example.com/x.png'],
      [' https://cdn.example.com/x.png', 'https://cdn.example.com/x.png'],
      ['https://cdn.example.com/a b.png', 'https://cdn.example.com/a%20b.png'],
    ]) {
      const [issue] = issues(mms([url]), def);
      expect(issue, url).toMatchObject({ code: 'INVALID_FIELD', path: '/media_urls/0' });
      expect(issue!.message, url).toContain(`is not written as it is read; if ${JSON.stringify(href)} is what you meant, send that`);
      expect(issues(mms([href]), def), href).toEqual([]);
    }
  });
  it('gives Twilio the serialization that was judged, whatever the call holds', async () => {
    const { sms } = await import('./sms/index.js');
    const settings = sms.settings({ NOTIFY_SMS_MEDIA_HOSTS: 'cdn.example.com' });
    const call = {
      via: 'sms' as const,
      to: '+14155550123',
      body: 'see',
      media_urls: ['https://cdn.example.com\\@evil.example/x.png', 'https://cdn.example.com/ok.png'],
    };
    const { payload } = await sms.buildPayload(call, { id: 'ntf_x', settings, timeoutMs: 1000 });
    expect(payload.MediaUrl).toEqual(['https://cdn.example.com/@evil.example/x.png', 'https://cdn.example.com/ok.png']);
  });
  it('is no email field', () => {
    expect(
      issues({ via: 'email', to: 'a@example.com', subject: 's', body_html: 'h', media_urls: ['https://x.example/a'] })[0],
    ).toMatchObject({ code: 'FIELD_NOT_ON_CHANNEL', path: '/media_urls' });
  });
});
