import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/config.js';
import { silentLogger } from '../core/log.js';
import { closeChannels, connectChannels } from './connect.js';
import { email } from './email/index.js';
import { CHANNELS } from './registry.js';

describe('connectChannels', () => {
  it('uses dry-run for every channel without credentials', async () => {
    const channels = await connectChannels(loadConfig({ HOME: '/tmp' }), silentLogger);
    expect(channels.map((c) => [c.name, c.live, c.providerName])).toEqual(
      CHANNELS.filter((c) => c.name !== 'webhook').map((c) => [c.name, false, 'dry-run']),
    );
    // The dry-run provider takes the payload the channel builds, and sends nothing.
    const receipt = await channels[0]!.open(async (c) => {
      const { payload } = await c.buildPayload(c.parse(email.examples[0]), 'ntf_1', 10_000, 0);
      return c.provider.send(payload, { notificationId: 'ntf_1', signal: new AbortController().signal });
    });
    expect(receipt).toEqual({});
    await closeChannels(channels);
  });

  it('makes a channel live when its credentials are set', async () => {
    const channels = await connectChannels(
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
    const builtIn = channels.filter((c) => ['email', 'sms', 'slack'].includes(c.name));
    expect(builtIn.map((c) => [c.name, c.live, c.providerName])).toEqual([
      ['email', true, 'smtp'],
      ['sms', true, 'twilio'],
      ['slack', true, 'slack'],
    ]);
    await closeChannels(channels);
  });
});
