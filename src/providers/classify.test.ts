/**
 * Vendor error classification, one table per adapter, on errors shaped as each client
 * throws them. The contract suites in test/providers-*.test.ts check the same paths live.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { silentLogger } from '../log.js';
import { dryRunProvider } from './dry-run.js';
import { DeliveryUnknownError, ProviderRejectedError, ProviderTransientError, RecipientOptedOutError } from './errors.js';
import { createProviders } from './index.js';
import { parseRetryAfterMs } from './retry-after.js';
import { classifySlackError } from './slack.js';
import { classifySmtpError, queueIdFromResponse } from './smtp.js';
import { classifyTwilioError } from './twilio.js';

const smtpErr = (fields: Record<string, unknown>) => Object.assign(new Error(String(fields.message ?? 'smtp')), fields);

describe('classifySmtpError', () => {
  it.each([
    [{ code: 'EAUTH', responseCode: 535, response: '535 5.7.8 Authentication failed' }, false, ProviderRejectedError],
    [{ code: 'EENVELOPE', responseCode: 550, response: '550 No such user', command: 'RCPT TO' }, false, ProviderRejectedError],
    [{ code: 'EMESSAGE', responseCode: 554, response: '554 Spam', command: 'DATA' }, true, ProviderRejectedError],
    [{ code: 'EENVELOPE', responseCode: 451, response: '451 Try later', command: 'RCPT TO' }, false, ProviderTransientError],
    [{ code: 'EMESSAGE', responseCode: 452, response: '452 Mailbox full', command: 'DATA' }, true, ProviderTransientError],
    [{ code: 'EPROTOCOL', responseCode: 503, response: '503 Bad sequence', permanent: false }, false, ProviderTransientError],
    [{ code: 'ESOCKET', originalCode: 'ECONNREFUSED', command: 'CONN' }, false, ProviderTransientError],
    [{ code: 'ECONNECTION', command: 'CONN' }, false, ProviderTransientError],
    [{ code: 'ETIMEDOUT', timeoutType: 'GREETING_TIMEOUT' }, false, ProviderTransientError],
    [{ code: 'ETIMEDOUT', timeoutType: 'SOCKET_TIMEOUT' }, true, DeliveryUnknownError],
    [{ code: 'ESOCKET', originalCode: 'ECONNRESET' }, true, DeliveryUnknownError],
    [{ code: 'EENVELOPE', message: 'No recipients defined' }, false, ProviderRejectedError],
  ])('%o (handed over: %s)', (fields, handedOver, kind) => {
    expect(classifySmtpError(smtpErr(fields), handedOver)).toBeInstanceOf(kind);
  });

  it('says whether the budget ran out before or after the message was handed over', () => {
    const budget = Object.assign(new Error('send budget of 800 ms ran out'), { name: 'BudgetExceededError' });
    const before = classifySmtpError(budget, false);
    expect(before).toBeInstanceOf(ProviderTransientError);
    expect(before.message).toContain('nothing was sent');
    const after = classifySmtpError(budget, true);
    expect(after).toBeInstanceOf(DeliveryUnknownError);
    expect(after.message).toContain('before it confirmed');
  });

  it('keeps the SMTP reply code and the cause', () => {
    const cause = smtpErr({ code: 'EMESSAGE', responseCode: 554, response: '554 5.7.1 Rejected as spam' });
    const mapped = classifySmtpError(cause, true);
    expect(mapped.vendorCode).toBe(554);
    expect(mapped.cause).toBe(cause);
    expect(mapped.message).toContain('Rejected as spam');
  });

  it('reads a queue id out of the final reply', () => {
    expect(queueIdFromResponse('250 2.0.0 Ok: queued as 4XyZ12AB')).toBe('4XyZ12AB');
    expect(queueIdFromResponse('250 OK id=1qAbCd-0001')).toBe('1qAbCd-0001');
    expect(queueIdFromResponse('250 OK')).toBeUndefined();
  });
});

describe('classifyTwilioError', () => {
  const rest = (status: number, code?: number) => Object.assign(new Error('x'), { status, code, message: 'vendor text' });
  const sent = { requested: true };

  it('maps the documented codes', () => {
    expect(classifyTwilioError(rest(400, 21610), sent)).toBeInstanceOf(RecipientOptedOutError);
    const invalid = classifyTwilioError(rest(400, 21211), sent);
    expect(invalid).toBeInstanceOf(ProviderRejectedError);
    expect(invalid.vendorCode).toBe(21211);
    expect(classifyTwilioError(rest(400, 21614), sent).vendorCode).toBe(21614);
    expect(classifyTwilioError(rest(404), sent)).toBeInstanceOf(ProviderRejectedError);
    expect(classifyTwilioError(rest(401, 20003), sent).message).toContain('TWILIO_AUTH_TOKEN');
  });

  it('retries 429 and 5xx with Retry-After from the kept headers', () => {
    const limited = classifyTwilioError(rest(429, 20429), { requested: true, headers: { 'Retry-After': '4' } });
    expect(limited).toBeInstanceOf(ProviderTransientError);
    expect((limited as ProviderTransientError).opts).toMatchObject({ rateLimited: true, retryAfterMs: 4000 });
    const down = classifyTwilioError(rest(502), { requested: true });
    expect((down as ProviderTransientError).opts).toMatchObject({ rateLimited: false, retryAfterMs: undefined });
  });

  it('tells a failure before the request from one after it', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyTwilioError(refused, sent)).toBeInstanceOf(ProviderTransientError);
    const timeout = Object.assign(new Error('timeout of 300ms exceeded'), { code: 'ECONNABORTED' });
    expect(classifyTwilioError(timeout, sent)).toBeInstanceOf(DeliveryUnknownError);
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(classifyTwilioError(reset, sent)).toBeInstanceOf(DeliveryUnknownError);
    expect(classifyTwilioError(new Error("Required parameter \"params['to']\" missing."), { requested: false })).toBeInstanceOf(
      ProviderRejectedError,
    );
  });

  it('tells an abort before the request was written (nothing sent) from one in flight', () => {
    const aborted = Object.assign(new Error('canceled'), { code: 'ERR_CANCELED' });
    const unsent = classifyTwilioError(aborted, { requested: true, mayHaveReached: false, aborted: true });
    expect(unsent).toBeInstanceOf(ProviderTransientError);
    expect(unsent.message).toContain('nothing was sent');
    const inFlight = classifyTwilioError(aborted, { requested: true, mayHaveReached: true, aborted: true });
    expect(inFlight).toBeInstanceOf(DeliveryUnknownError);
    expect(inFlight.message).toContain('in flight');
    // Not known to be unwritten: an issued request may have reached Twilio.
    expect(classifyTwilioError(aborted, { requested: true, aborted: true })).toBeInstanceOf(DeliveryUnknownError);
  });
});

describe('classifySlackError', () => {
  const platform = (error: string, extra: Record<string, unknown> = {}) =>
    Object.assign(new Error(`An API error occurred: ${error}`), { code: 'slack_webapi_platform_error', data: { ok: false, error, ...extra } });

  it.each(['channel_not_found', 'not_in_channel', 'is_archived', 'msg_too_long', 'invalid_auth', 'not_authed', 'something_new'])(
    '%s is a rejection',
    (code) => {
      const mapped = classifySlackError(platform(code), 'C0123');
      expect(mapped).toBeInstanceOf(ProviderRejectedError);
      expect(mapped.vendorCode).toBe(code);
    },
  );

  it('tells how to fix not_in_channel', () => {
    expect(classifySlackError(platform('not_in_channel'), '#ops').message).toMatch(/\/invite .*#ops|#ops.*\/invite/);
  });

  it('retries rate limits and service errors; internal errors may have posted', () => {
    const limited = classifySlackError(
      Object.assign(new Error('rate limited'), { code: 'slack_webapi_rate_limited_error', retryAfter: 12 }),
      'C1',
    );
    expect((limited as ProviderTransientError).opts).toMatchObject({ rateLimited: true, retryAfterMs: 12_000 });
    expect(classifySlackError(platform('ratelimited'), 'C1')).toBeInstanceOf(ProviderTransientError);
    expect(classifySlackError(platform('service_unavailable'), 'C1')).toBeInstanceOf(ProviderTransientError);
    expect(classifySlackError(platform('fatal_error'), 'C1')).toBeInstanceOf(DeliveryUnknownError);
    const http503 = Object.assign(new Error('HTTP 503'), {
      code: 'slack_webapi_http_error',
      statusCode: 503,
      headers: { 'retry-after': '5' },
    });
    expect((classifySlackError(http503, 'C1') as ProviderTransientError).opts.retryAfterMs).toBe(5000);
  });

  it('maps request errors by their root cause', () => {
    const wrap = (original: Error) => Object.assign(new Error('request failed'), { code: 'slack_webapi_request_error', original });
    const refused = wrap(Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) }));
    expect(classifySlackError(refused, 'C1')).toBeInstanceOf(ProviderTransientError);
    const timeout = wrap(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    expect(classifySlackError(timeout, 'C1')).toBeInstanceOf(DeliveryUnknownError);
  });
});

describe('parseRetryAfterMs', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfterMs('3')).toBe(3000);
    expect(parseRetryAfterMs(['2'])).toBe(2000);
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:10 GMT', Date.parse('2026-01-01T00:00:00Z'))).toBe(10_000);
    expect(parseRetryAfterMs('soon')).toBeUndefined();
    expect(parseRetryAfterMs(undefined)).toBeUndefined();
  });
});

describe('createProviders', () => {
  it('uses dry-run for every channel without credentials', async () => {
    const p = await createProviders(loadConfig({ HOME: '/tmp' }), silentLogger);
    expect([p.email, p.sms, p.slack]).toEqual([dryRunProvider, dryRunProvider, dryRunProvider]);
    expect(await p.email.send({ envelope: { from: 'a@b', to: ['c@d'] }, messageId: '<x@y>', raw: '' }, {
      notificationId: 'ntf_1',
      signal: new AbortController().signal,
    })).toEqual({});
    await p.closeAll();
  });

  it('makes a channel live when its credentials are set', async () => {
    const p = await createProviders(
      loadConfig({
        HOME: '/tmp',
        SMTP_URL: 'smtp://127.0.0.1:1',
        EMAIL_FROM: 'n@example.com',
        NOTIFY_EMAIL_ALLOW: 'example.com',
        TWILIO_ACCOUNT_SID: 'AC' + 'a'.repeat(32),
        TWILIO_AUTH_TOKEN: 't',
        TWILIO_FROM: '+14155550100',
        NOTIFY_SMS_ALLOW: '+1415',
        SLACK_BOT_TOKEN: 'xoxb-1',
        NOTIFY_SLACK_ALLOW: '#ops',
      }),
      silentLogger,
    );
    expect([p.email.name, p.sms.name, p.slack.name]).toEqual(['smtp', 'twilio', 'slack']);
    await p.closeAll();
  });
});
