/**
 * `notify-mcp doctor` for live SMS, with the official twilio client: fetch the account (the
 * credentials work and it is active), then check that the sender exists on it: the from
 * number among its IncomingPhoneNumbers, or the messaging service. Reads only.
 */
import type TwilioRequestClient from 'twilio/lib/base/RequestClient.js';
import { fail, pass, type Check, type CheckContext } from '../../core/check.js';

export interface TwilioCheckSettings {
  accountSid: string;
  authToken: string;
  from?: string | undefined;
  messagingServiceSid?: string | undefined;
  apiUrl?: string | undefined;
}

const CREDENTIALS = 'check TWILIO_ACCOUNT_SID (AC…) and TWILIO_AUTH_TOKEN in the Twilio Console (Account › API keys & tokens)';

/** Twilio's answer, or a network failure, in words with the fix. */
function failure(name: string, what: string, err: unknown, notFoundFix: string): Check {
  const e = err as { status?: number; code?: number; message?: string };
  if (e.status === 401 || e.code === 20003) return fail(name, `Twilio refused the credentials (${e.code ?? 401})`, CREDENTIALS);
  if (e.status === 404 || e.code === 20404) return fail(name, `${what} was not found (404)`, notFoundFix);
  if (e.status !== undefined)
    return fail(
      name,
      `Twilio answered ${e.status}${e.code ? ` (error ${e.code})` : ''}: ${e.message ?? ''}`,
      'see https://www.twilio.com/docs/errors for the code',
    );
  return fail(
    name,
    `Twilio could not be reached: ${e.message ?? String(err)}`,
    'check this machine reaches api.twilio.com over HTTPS (proxy, firewall, DNS)',
  );
}

export async function checkTwilio(settings: TwilioCheckSettings, ctx: CheckContext): Promise<Check[]> {
  const twilio = (await import('twilio')).default;
  const origin = settings.apiUrl;
  // TWILIO_API_URL (tests): every Twilio host's requests go to that one origin.
  class Redirected extends twilio.RequestClient {
    override request<T>(req: TwilioRequestClient.RequestOptions<T>) {
      const url = new URL(req.uri);
      return super.request<T>({ ...req, uri: origin ? origin + url.pathname + url.search : req.uri, logLevel: 'none' });
    }
  }
  const client = twilio(settings.accountSid, settings.authToken, {
    httpClient: new Redirected({ timeout: ctx.timeoutMs, autoRetry: false }),
    logLevel: 'none',
  });

  const checks: Check[] = [];
  try {
    const account = await client.api.v2010.accounts(settings.accountSid).fetch();
    if (account.status !== 'active') {
      return [
        fail(
          'sms account',
          `account ${settings.accountSid} is ${account.status}`,
          'reactivate it in the Twilio Console, or use an active account',
        ),
      ];
    }
    checks.push(pass('sms account', `account ${settings.accountSid} (${account.friendlyName}) is active; credentials accepted`));
  } catch (err) {
    return [failure('sms account', `account ${settings.accountSid}`, err, CREDENTIALS)];
  }

  if (settings.messagingServiceSid) {
    const sid = settings.messagingServiceSid;
    try {
      const service = await client.messaging.v1.services(sid).fetch();
      checks.push(pass('sms sender', `messaging service ${sid} (${service.friendlyName}) exists`));
    } catch (err) {
      checks.push(
        failure(
          'sms sender',
          `messaging service ${sid}`,
          err,
          'set TWILIO_MESSAGING_SERVICE_SID to a service of this account (Console › Messaging › Services, MG…)',
        ),
      );
    }
  } else if (settings.from && !settings.from.startsWith('+')) {
    checks.push(
      pass('sms sender', `TWILIO_FROM ${settings.from} is an alphanumeric sender ID: Twilio does not list those, so it is not checked`),
    );
  } else if (settings.from) {
    try {
      const numbers = await client.api.v2010
        .accounts(settings.accountSid)
        .incomingPhoneNumbers.list({ phoneNumber: settings.from, limit: 20 });
      checks.push(
        numbers.some((n) => n.phoneNumber === settings.from)
          ? pass('sms sender', `TWILIO_FROM ${settings.from} is a number of this account`)
          : fail(
              'sms sender',
              `TWILIO_FROM ${settings.from} is not a number of this account`,
              'set TWILIO_FROM to one of its numbers (Console › Phone Numbers), or set TWILIO_MESSAGING_SERVICE_SID',
            ),
      );
    } catch (err) {
      checks.push(failure('sms sender', `TWILIO_FROM ${settings.from}`, err, "set TWILIO_FROM to one of the account's numbers"));
    }
  }
  return checks;
}
