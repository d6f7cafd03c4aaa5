import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { silentLogger } from '../log.js';
import { dryRunProvider } from './dry-run.js';
import { createProviders } from './index.js';

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
