/**
 * SMTP failover (issue 38): SMTP_URL lists relays in order, and the email channel's provider
 * tries the next only when the one before clearly did not accept: a refused connection, 421
 * before DATA, 550 at RCPT. A relay that drops the connection after DATA may hold the mail:
 * that is DELIVERY_UNKNOWN, with no second relay tried. Real smtp-server instances on loopback.
 */
import type { Socket } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import MailComposer from 'nodemailer/lib/mail-composer';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/core/log.js';
import { sendWithRetry, sendFailureInfo } from '../../src/providers/retry.js';
import type { Provider } from '../../src/providers/types.js';
import type { EmailPayload } from '../../src/channels/email/smtp.js';
import { smtpRelays } from '../../src/channels/email/relays.js';
import { sendNotification } from '../../src/notification/pipeline.js';
import { digestOf } from '../../src/store/audit.js';
import { verifyAudit } from '../../src/store/audit-verify.js';
import { failure, openTempStore, pipelineDeps } from '../helpers/pipeline-kit.js';

type Behaviour = 'accept' | 'refuse-421-at-mail' | 'refuse-550-at-rcpt' | 'drop-after-data';

interface Relay {
  port: number;
  mails: number;
  /** Sessions that reached MAIL FROM. */
  tries: number;
  close(): Promise<void>;
}

async function relay(behaviour: Behaviour): Promise<Relay> {
  const sockets = new Set<Socket>();
  const state = { mails: 0, tries: 0 };
  const smtpError = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onMailFrom(_address, _session: SMTPServerSession, callback) {
      state.tries++;
      callback(behaviour === 'refuse-421-at-mail' ? smtpError(421, 'Service not available, try later') : undefined);
    },
    onRcptTo(_address, _session, callback) {
      callback(behaviour === 'refuse-550-at-rcpt' ? smtpError(550, 'Relaying denied') : undefined);
    },
    onData(stream: SMTPServerDataStream, _session, callback) {
      stream.resume();
      stream.on('end', () => {
        if (behaviour === 'drop-after-data') {
          // The whole message arrived; the connection drops before any reply.
          for (const s of sockets) s.destroy();
          return;
        }
        state.mails++;
        callback(null, 'Ok: queued as Q1');
      });
    },
  });
  (server as unknown as { server: import('node:net').Server }).server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = ((server as unknown as { server: import('node:net').Server }).server.address() as import('node:net').AddressInfo).port;
  return {
    port,
    get mails() {
      return state.mails;
    },
    get tries() {
      return state.tries;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on: the relay refuses at connect. */
async function closedPort(): Promise<number> {
  const r = await relay('accept');
  await r.close();
  return r.port;
}

const FROM = 'notify-mcp@sender.test';
async function payload(id: string): Promise<EmailPayload> {
  const messageId = `<${id}@notify-mcp.local>`;
  const raw = await new MailComposer({ from: FROM, to: 'ops@example.com', subject: 'Disk full', text: 'Disk /var is at 95%.', messageId })
    .compile()
    .build();
  return { envelope: { from: FROM, to: ['ops@example.com'] }, messageId, raw: raw.toString('utf8') };
}

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((o) => o.close()));
});

/** The email channel's own provider for these relays, as the server builds it from SMTP_URL. */
async function emailProvider(ports: number[]): Promise<Provider<EmailPayload>> {
  const config = loadConfig({
    NOTIFY_DATA_DIR: '/nonexistent',
    SMTP_URL: ports.map((p) => `smtp://127.0.0.1:${p}`).join(','),
    EMAIL_FROM: FROM,
    NOTIFY_EMAIL_ALLOW: '*',
  });
  const connected = await config.channels
    .find((c) => c.name === 'email')!
    .connect({ log: silentLogger, maxConcurrent: 2, requestTimeoutMs: 1_000 });
  opened.push({ close: () => connected.close() });
  return connected.open((channel) => channel.provider as unknown as Provider<EmailPayload>);
}

const send = async (provider: Provider<EmailPayload>, id: string, budgetMs = 5_000) =>
  sendWithRetry(provider, await payload(id), { notificationId: id, budgetMs, log: silentLogger, maxAttempts: 1 });

describe('SMTP failover across ordered relays', () => {
  it('reads SMTP_URL as relays in order; one URL with a comma in its password stays one', () => {
    expect(smtpRelays('smtps://u:p@a.example:465, smtp://b.example:587')).toEqual(['smtps://u:p@a.example:465', 'smtp://b.example:587']);
    expect(smtpRelays('smtps://u:p,q@a.example:465')).toEqual(['smtps://u:p,q@a.example:465']);
  });

  it('tries the second relay when the first refuses at connect', async () => {
    const second = await relay('accept');
    opened.push(second);
    const closed = await closedPort();
    const result = await send(await emailProvider([closed, second.port]), 'ntf_connect');
    expect(second.mails).toBe(1);
    expect(result.receipt.providerStatus).toMatch(/queued as Q1.*\(relay 127\.0\.0\.1:\d+\)/);
    // Each relay is an attempt of its own, named host:port, with its own outcome; both were handed the recorded payload.
    expect(result.history).toEqual([
      expect.objectContaining({ attempt: 1, endpoint: `127.0.0.1:${closed}`, outcome: 'transient', vendorCode: 'ECONNREFUSED' }),
      expect.objectContaining({ attempt: 2, endpoint: `127.0.0.1:${second.port}`, outcome: 'sent' }),
    ]);
    expect(result.history.map((h) => h.digest)).toEqual([undefined, undefined]);
  });

  it('tries the second relay when the first answers 421 before DATA, or 550 at RCPT', async () => {
    for (const behaviour of ['refuse-421-at-mail', 'refuse-550-at-rcpt'] as const) {
      const first = await relay(behaviour);
      const second = await relay('accept');
      opened.push(first, second);
      await send(await emailProvider([first.port, second.port]), `ntf_${behaviour}`);
      expect(first.tries, behaviour).toBe(1);
      expect(first.mails, behaviour).toBe(0);
      expect(second.mails, behaviour).toBe(1);
    }
  });

  it('a drop after DATA is DELIVERY_UNKNOWN, and no second relay is tried', async () => {
    const first = await relay('drop-after-data');
    const second = await relay('accept');
    opened.push(first, second);
    const err = await send(await emailProvider([first.port, second.port]), 'ntf_drop').then(
      () => undefined,
      (e: unknown) => e as Error & { code: string },
    );
    expect(err?.code).toBe('DELIVERY_UNKNOWN');
    expect(sendFailureInfo(err)!.history).toEqual([
      expect.objectContaining({ attempt: 1, endpoint: `127.0.0.1:${first.port}`, outcome: 'unknown' }),
    ]);
    expect(second.tries).toBe(0);
    expect(second.mails).toBe(0);
  });

  it('answers with the last relay’s failure when every relay refuses', async () => {
    const first = await relay('refuse-421-at-mail');
    opened.push(first);
    const err = await send(await emailProvider([await closedPort(), first.port]), 'ntf_all', 1_500).then(
      () => undefined,
      (e: unknown) => e as Error & { code: string },
    );
    expect(err?.code).toBe('PROVIDER_UNAVAILABLE');
    expect(err?.message).toContain('421');
  });
});

describe('SMTP failover through the send pipeline: the record and the audit', () => {
  /** One mail through the email channel over these relays, with a real SQLite store; its record and its audit entries. */
  async function sendMail(ports: number[], budgetMs = 1_500) {
    const store = await openTempStore('smtp-failover');
    opened.push({ close: () => store.close() });
    const deps = await pipelineDeps({
      store,
      providers: {},
      env: {
        SMTP_URL: ports.map((p) => `smtp://127.0.0.1:${p}`).join(','),
        EMAIL_FROM: FROM,
        NOTIFY_EMAIL_ALLOW: '*',
        NOTIFY_SEND_BUDGET_MS: String(budgetMs),
      },
    });
    opened.push({ close: () => Promise.all(deps.channels.map((c) => c.close())).then(() => undefined) });
    const call = { via: 'email', to: 'ops@example.com', subject: 'Disk full', body_html: '<p>Disk /var is at 95%.</p>' };
    const sent = sendNotification(deps, 'email', call, { client: 'bot', tool: 'send_notification' });
    const id = await sent.then(
      (r) => r.id,
      async (e: unknown) => (await failure(Promise.reject(e))).details.notificationId as string | undefined,
    );
    const record = id ? await store.getDelivery(id) : (await store.listDeliveries(1))[0]!;
    const audit = await store.auditFor(record!.id);
    expect(await verifyAudit(store)).toMatchObject({ ok: true });
    return { record: record!, requests: audit.filter((e) => e.kind === 'request'), kinds: audit.map((e) => e.kind) };
  }

  it('first relay refusing at connect, second answering 421 before DATA: every attempt names its relay, each with its request digest, all equal', async () => {
    const closed = await closedPort();
    const busy = await relay('refuse-421-at-mail');
    opened.push(busy);
    const { record, requests, kinds } = await sendMail([closed, busy.port]);
    expect(record).toMatchObject({ status: 'failed', error_code: 'PROVIDER_UNAVAILABLE' });
    // Retried within the budget: each round tries both relays in order.
    expect(record.attempt_log.length).toBeGreaterThanOrEqual(2);
    expect(record.attempt_log.length % 2).toBe(0);
    expect(record.attempts).toBe(record.attempt_log.length);
    expect(record.attempt_log.slice(0, 2)).toEqual([
      expect.objectContaining({ attempt: 1, endpoint: `127.0.0.1:${closed}`, outcome: 'transient', vendor_code: 'ECONNREFUSED' }),
      expect.objectContaining({ attempt: 2, endpoint: `127.0.0.1:${busy.port}`, outcome: 'transient', vendor_code: 421 }),
    ]);
    expect(record.attempt_log.map((a) => a.endpoint)).toEqual(
      record.attempt_log.map((_, i) => `127.0.0.1:${i % 2 === 0 ? closed : busy.port}`),
    );
    // Never the credentials of the URL, only host and port.
    expect(JSON.stringify(record.attempt_log)).not.toContain('smtp://');
    // One request entry per attempt: both relays were handed the same bytes, so the digests are the payload's, all equal.
    expect(requests).toHaveLength(record.attempt_log.length);
    expect(new Set(requests.map((e) => e.digest))).toEqual(new Set([digestOf(record.payload)]));
    expect(kinds.at(-1)).toBe('outcome.failed');
  });

  it('first relay refusing at connect, second accepting: two attempts, two equal request digests, sent', async () => {
    const closed = await closedPort();
    const second = await relay('accept');
    opened.push(second);
    const { record, requests, kinds } = await sendMail([closed, second.port]);
    expect(record.status).toBe('sent');
    expect(record.attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, endpoint: `127.0.0.1:${closed}`, outcome: 'transient' }),
      expect.objectContaining({ attempt: 2, endpoint: `127.0.0.1:${second.port}`, outcome: 'sent' }),
    ]);
    expect(requests.map((e) => e.digest)).toEqual([digestOf(record.payload), digestOf(record.payload)]);
    expect(kinds).toEqual(['request', 'request', 'outcome.sent']);
  });

  it('a drop after DATA is one attempt, unknown, with one request entry: no second relay, no second digest', async () => {
    const first = await relay('drop-after-data');
    const second = await relay('accept');
    opened.push(first, second);
    const { record, requests } = await sendMail([first.port, second.port], 5_000);
    expect(record).toMatchObject({ status: 'unknown', error_code: 'DELIVERY_UNKNOWN', attempts: 1 });
    expect(record.attempt_log).toEqual([expect.objectContaining({ attempt: 1, endpoint: `127.0.0.1:${first.port}`, outcome: 'unknown' })]);
    expect(requests.map((e) => e.digest)).toEqual([digestOf(record.payload)]);
    expect(second.tries).toBe(0);
  });
});
