/**
 * Twilio error classification, on errors shaped as its client throws them. The contract
 * suite in test/providers/twilio.test.ts checks the same paths live.
 */
import { describe, expect, it } from 'vitest';
import { DeliveryUnknownError, ProviderRejectedError, ProviderTransientError, RecipientOptedOutError } from '../../providers/errors.js';
import { classifyTwilioError } from './twilio.js';

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
    expect(classifyTwilioError(new Error('Required parameter "params[\'to\']" missing.'), { requested: false })).toBeInstanceOf(
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
