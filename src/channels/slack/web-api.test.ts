/**
 * Slack error classification, on errors shaped as the WebClient throws them. The contract
 * suite in test/providers/slack.test.ts checks the same paths live.
 */
import { describe, expect, it } from 'vitest';
import { DeliveryUnknownError, ProviderRejectedError, ProviderTransientError } from '../../providers/errors.js';
import { classifySlackError } from './web-api.js';

describe('classifySlackError', () => {
  const platform = (error: string, extra: Record<string, unknown> = {}) =>
    Object.assign(new Error(`An API error occurred: ${error}`), {
      code: 'slack_webapi_platform_error',
      data: { ok: false, error, ...extra },
    });

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
