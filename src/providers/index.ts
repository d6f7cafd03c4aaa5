/**
 * One provider per channel: live when the channel's credentials are set, dry-run otherwise.
 * A live channel's SDK is imported here and only here, so a dry-run start loads none.
 */
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { dryRunProvider } from './dry-run.js';
import type { EmailPayload } from '../channels/email/smtp.js';
import type { SlackPayload } from '../channels/slack/web-api.js';
import type { SmsPayload } from '../channels/sms/twilio.js';
import type { Provider } from './types.js';

export interface Providers {
  email: Provider<EmailPayload>;
  sms: Provider<SmsPayload>;
  slack: Provider<SlackPayload>;
  closeAll(): Promise<void>;
}

/** A single request may take this long; the send's budget may end the wait sooner. */
const HTTP_TIMEOUT_MS = 15_000;

export async function createProviders(config: Config, log: Logger): Promise<Providers> {
  const requestTimeout = Math.min(HTTP_TIMEOUT_MS, config.sendBudgetMs);
  const email: Provider<EmailPayload> =
    config.email.live && config.email.smtpUrl
      ? await (await import('../channels/email/smtp.js')).createSmtpProvider({
          url: config.email.smtpUrl,
          pool: true,
          timeoutsMs: { connection: 10_000, greeting: 10_000, socket: requestTimeout },
          maxConcurrent: config.providerConcurrency,
          log,
        })
      : dryRunProvider;
  const sms: Provider<SmsPayload> =
    config.sms.live && config.sms.accountSid && config.sms.authToken
      ? await (await import('../channels/sms/twilio.js')).createTwilioProvider({
          accountSid: config.sms.accountSid,
          authToken: config.sms.authToken,
          apiUrl: config.sms.apiUrl,
          timeoutMs: requestTimeout,
          maxConcurrent: config.providerConcurrency,
          log,
        })
      : dryRunProvider;
  const slack: Provider<SlackPayload> =
    config.slack.live && config.slack.botToken
      ? await (await import('../channels/slack/web-api.js')).createSlackProvider({
          token: config.slack.botToken,
          apiUrl: config.slack.apiUrl,
          timeoutMs: requestTimeout,
          maxConcurrent: config.providerConcurrency,
          log,
        })
      : dryRunProvider;

  return {
    email,
    sms,
    slack,
    async closeAll() {
      await Promise.allSettled([email.close?.(), sms.close?.(), slack.close?.()]);
    },
  };
}
