/**
 * Twilio sender failover (issue 38): TWILIO_FROM lists senders in order; the SMS channel's
 * provider moves to the next only on a Twilio error that belongs to the sender (21606: this
 * From cannot send there), never on one that belongs to the recipient (21211) or a 5xx. A
 * fake Twilio Messages endpoint on loopback, reached through the twilio client.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { digestOf } from '../../src/store/audit.js';
import { silentLogger } from '../../src/core/log.js';
import { sendFailureInfo, sendWithRetry } from '../../src/providers/retry.js';
import type { Provider } from '../../src/providers/types.js';
import type { SmsPayload } from '../../src/channels/sms/twilio.js';
import { closeChannels } from '../../src/channels/connect.js';
import { sendNotification } from '../../src/notification/pipeline.js';
import { verifyAudit } from '../../src/store/audit-verify.js';
import { openTempStore, pipelineDeps } from '../helpers/pipeline-kit.js';

const CANNOT_SEND = '+15005550001';
const GOOD = '+15005550006';
const BAD_RECIPIENT = '+15005550009';

let origin: string;
let close: () => Promise<void>;
const froms: string[] = [];

beforeAll(async () => {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      froms.push(form.From ?? '');
      const reply = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (form.To === BAD_RECIPIENT) return reply(400, { code: 21211, message: "Invalid 'To' Phone Number", status: 400 });
      if (form.From === CANNOT_SEND)
        return reply(400, {
          code: 21606,
          message: "The 'From' phone number provided is not a valid message-capable Twilio phone number",
          status: 400,
        });
      reply(201, { sid: `SM${'0'.repeat(32)}`, status: 'queued', from: form.From, to: form.To });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise<void>((resolve) => server.close(() => resolve()));
});
afterAll(() => close());
beforeEach(() => {
  froms.length = 0;
});

async function smsProvider(senders: string[]) {
  const config = loadConfig({
    NOTIFY_DATA_DIR: '/nonexistent',
    TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`,
    TWILIO_AUTH_TOKEN: 'token',
    TWILIO_FROM: senders.join(','),
    TWILIO_API_URL: origin,
    NOTIFY_SMS_ALLOW: '*',
  });
  const connected = await config.channels
    .find((c) => c.name === 'sms')!
    .connect({ log: silentLogger, maxConcurrent: 2, requestTimeoutMs: 2_000 });
  return { provider: connected.open((c) => c.provider as unknown as Provider<SmsPayload>), close: () => connected.close() };
}

const send = (provider: Provider<SmsPayload>, to: string) =>
  sendWithRetry(
    provider,
    { To: to, Body: 'Disk full', From: CANNOT_SEND },
    { notificationId: 'ntf_1', budgetMs: 3_000, log: silentLogger, maxAttempts: 1 },
  );

describe('Twilio sender failover', () => {
  it('moves to the next sender when Twilio refuses the first for a reason of its own (21606)', async () => {
    const sms = await smsProvider([CANNOT_SEND, GOOD]);
    try {
      const result = await send(sms.provider, '+14155550123');
      expect(froms).toEqual([CANNOT_SEND, GOOD]);
      expect(result.receipt.providerStatus).toContain(`(from ${GOOD})`);
      // Each sender is an attempt of its own; the second's request differs in its From, so it has its own digest.
      expect(result.history).toEqual([
        expect.objectContaining({ attempt: 1, endpoint: CANNOT_SEND, outcome: 'rejected', vendorCode: 21606 }),
        expect.objectContaining({ attempt: 2, endpoint: GOOD, outcome: 'sent' }),
      ]);
      expect(result.history[0]!.digest).toBeUndefined();
      expect(result.history[1]!.digest).toBe(digestOf({ To: '+14155550123', Body: 'Disk full', From: GOOD }));
    } finally {
      await sms.close();
    }
  });

  it('does not move on a refusal that belongs to the recipient (21211): the same from any sender', async () => {
    const sms = await smsProvider([CANNOT_SEND, GOOD]);
    try {
      const err = await send(sms.provider, BAD_RECIPIENT).then(
        () => undefined,
        (e: unknown) => e as Error & { code: string },
      );
      expect(err?.code).toBe('PROVIDER_REJECTED');
      expect(froms).toEqual([CANNOT_SEND]);
      expect(sendFailureInfo(err)!.history).toEqual([
        expect.objectContaining({ attempt: 1, endpoint: CANNOT_SEND, outcome: 'rejected', vendorCode: 21211 }),
      ]);
    } finally {
      await sms.close();
    }
  });

  it('with one sender, a sender refusal is the answer', async () => {
    const sms = await smsProvider([CANNOT_SEND]);
    try {
      const err = await send(sms.provider, '+14155550123').then(
        () => undefined,
        (e: unknown) => e as Error & { code: string },
      );
      expect(err?.code).toBe('PROVIDER_REJECTED');
      expect(froms).toEqual([CANNOT_SEND]);
    } finally {
      await sms.close();
    }
  });
});

describe('Twilio sender failover through the send pipeline: the record and the audit', () => {
  it('names each sender in attempts; the audit has a request entry per sender, the second with the digest of its own From', async () => {
    const store = await openTempStore('twilio-senders');
    const deps = await pipelineDeps({
      store,
      providers: {},
      env: {
        TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`,
        TWILIO_AUTH_TOKEN: 'token',
        TWILIO_FROM: `${CANNOT_SEND},${GOOD}`,
        TWILIO_API_URL: origin,
        NOTIFY_SMS_ALLOW: '*',
      },
    });
    try {
      const sent = await sendNotification(deps, 'sms', { via: 'sms', to: '+14155550123', body: 'Disk full' }, { client: 'bot' });
      expect(froms).toEqual([CANNOT_SEND, GOOD]);
      const record = (await store.getDelivery(sent.id))!;
      expect(record).toMatchObject({ status: 'sent', attempts: 2 });
      expect(record.attempt_log).toEqual([
        expect.objectContaining({ attempt: 1, endpoint: CANNOT_SEND, outcome: 'rejected', vendor_code: 21606 }),
        expect.objectContaining({ attempt: 2, endpoint: GOOD, outcome: 'sent' }),
      ]);
      // The record keeps the payload as built (the first sender); the second attempt's request is it with the other From.
      const payload = record.payload as SmsPayload;
      expect(payload.From).toBe(CANNOT_SEND);
      const requests = (await store.auditFor(sent.id)).filter((e) => e.kind === 'request');
      expect(requests.map((e) => e.digest)).toEqual([digestOf(payload), digestOf({ ...payload, From: GOOD })]);
      expect(await verifyAudit(store)).toMatchObject({ ok: true });
    } finally {
      await closeChannels(deps.channels);
      await store.close();
    }
  });
});
