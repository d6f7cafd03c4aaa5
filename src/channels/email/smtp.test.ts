/**
 * SMTP error classification, on errors shaped as nodemailer throws them. The contract suite
 * in test/providers/smtp.test.ts checks the same paths live.
 */
import { describe, expect, it } from 'vitest';
import { DeliveryUnknownError, ProviderRejectedError, ProviderTransientError } from '../../providers/errors.js';
import { classifySmtpError, queueIdFromResponse } from './smtp.js';

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
