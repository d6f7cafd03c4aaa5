/**
 * SMTP adapter contract: nodemailer talking to a real SMTP server (smtp-server) on loopback.
 */
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import MailComposer from 'nodemailer/lib/mail-composer';
import { NotifyError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { DeliveryUnknownError, ProviderRejectedError, ProviderTransientError } from '../../src/providers/errors.js';
import { sendFailureInfo, sendWithRetry } from '../../src/providers/retry.js';
import { createSmtpProvider, type EmailPayload } from '../../src/channels/email/smtp.js';
import type { Provider } from '../../src/providers/types.js';
import { SMTP_USER, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { caught } from '../helpers/caught.js';
import { burst, expectNothingAfterAnswer, sleep, type Arrival } from '../helpers/burst.js';

const FROM = 'notify-mcp@sender.test';

async function buildPayload(id: string, to: string[] = ['ops@example.com', 'oncall@example.com']): Promise<EmailPayload> {
  const messageId = `<${id}@notify-mcp.local>`;
  const raw = await new MailComposer({
    from: FROM,
    to,
    replyTo: 'replies@example.com',
    subject: `Disk almost full (${id})`,
    html: '<p>Disk <b>/var</b> is at 95%.</p>',
    text: 'Disk /var is at 95%.',
    messageId,
    headers: { 'X-Notification-Id': id },
  })
    .compile()
    .build();
  return { envelope: { from: FROM, to }, messageId, raw: raw.toString('utf8') };
}

function signal(): AbortSignal {
  return new AbortController().signal;
}

describe('SMTP provider against smtp-server', () => {
  let server: TestSmtpServer;
  let provider: Provider<EmailPayload>;
  const extra: Provider<EmailPayload>[] = [];

  beforeAll(async () => {
    server = await startSmtpServer();
    provider = await createSmtpProvider({ url: server.url, log: silentLogger, timeoutsMs: { socket: 2_000 } });
  });
  afterEach(() => {
    server.replies.length = 0;
  });
  afterAll(async () => {
    await provider?.close?.();
    for (const p of extra) await p.close?.();
    await server?.close();
  });

  it('delivers the exact MIME message to the envelope recipients', async () => {
    const payload = await buildPayload('ntf_mime1');
    server.replies.push({ kind: 'ok', queueId: 'Q123ABC' });
    const receipt = await provider.send(payload, { notificationId: 'ntf_mime1', signal: signal() });
    expect(receipt.providerMessageId).toBe('Q123ABC');

    const mail = server.received.at(-1)!;
    expect(mail.user).toBe(SMTP_USER);
    expect(mail.from).toBe(FROM);
    expect(mail.to).toEqual(['ops@example.com', 'oncall@example.com']);
    // the bytes on the wire are the bytes recorded (the server strips the final CRLF.CRLF)
    expect(mail.raw.replace(/\r\n$/, '')).toBe(payload.raw.replace(/\r\n$/, ''));
    expect(mail.raw).toMatch(/^Subject: Disk almost full \(ntf_mime1\)\r$/m);
    expect(mail.raw).toMatch(/^Reply-To: replies@example\.com\r$/m);
    expect(mail.raw).toMatch(/^To: ops@example\.com, oncall@example\.com\r$/m);
    expect(mail.raw).toMatch(/^X-Notification-Id: ntf_mime1\r$/im);
    expect(mail.raw).toMatch(/^Message-ID: <ntf_mime1@notify-mcp\.local>\r$/m);
    expect(mail.raw).toMatch(/^Content-Type: multipart\/alternative;/m);
    expect(mail.raw).toMatch(/^Content-Type: text\/plain; charset=utf-8\r$/m);
    expect(mail.raw).toMatch(/^Content-Type: text\/html; charset=utf-8\r$/m);
    expect(mail.raw).toContain('Disk /var is at 95%.');
    expect(mail.raw).toContain('<p>Disk <b>/var</b> is at 95%.</p>');
  });

  it('falls back to the Message-ID when the server names no queue id', async () => {
    const payload = await buildPayload('ntf_mime2', ['a@example.com']);
    const receipt = await provider.send(payload, { notificationId: 'ntf_mime2', signal: signal() });
    expect(receipt.providerMessageId).toBe('<ntf_mime2@notify-mcp.local>');
    expect(server.received.at(-1)!.to).toEqual(['a@example.com']);
  });

  it('maps a refused login to ProviderRejectedError', async () => {
    const bad = await createSmtpProvider({
      url: `smtp://${SMTP_USER}:wrong@127.0.0.1:${server.port}`,
      log: silentLogger,
      pool: false,
    });
    extra.push(bad);
    const before = server.dataCount();
    const err = await caught(bad.send(await buildPayload('ntf_auth'), { notificationId: 'ntf_auth', signal: signal() }));
    expect(err).toBeInstanceOf(ProviderRejectedError);
    expect((err as ProviderRejectedError).vendorCode).toBe(535);
    expect((err as Error).message).toContain('SMTP_URL');
    expect(server.dataCount()).toBe(before);
  });

  it('maps SMTP 4xx to ProviderTransientError, and sendWithRetry retries it to success', async () => {
    server.replies.push({ kind: 'error', code: 451, message: 'Try again later' }, { kind: 'ok', queueId: 'QAFTER4XX' });
    const before = server.dataCount();
    const payload = await buildPayload('ntf_4xx');
    const retries: number[] = [];
    const out = await sendWithRetry(provider, payload, {
      notificationId: 'ntf_4xx',
      budgetMs: 10_000,
      log: silentLogger,
      onRetry: (attempt) => retries.push(attempt),
    });
    expect(out.attempts).toBe(2);
    expect(out.receipt.providerMessageId).toBe('QAFTER4XX');
    expect(out.history[0]).toMatchObject({ outcome: 'transient', vendorCode: 451 });
    expect(retries).toEqual([1]);
    expect(server.dataCount() - before).toBe(2);
  });

  it('maps SMTP 5xx to ProviderRejectedError, which sendWithRetry does not retry', async () => {
    server.replies.push({ kind: 'error', code: 554, message: 'Message rejected as spam' });
    const before = server.dataCount();
    const payload = await buildPayload('ntf_5xx');
    const direct = await caught(provider.send(payload, { notificationId: 'ntf_5xx', signal: signal() }));
    expect(direct).toBeInstanceOf(ProviderRejectedError);
    expect((direct as Error).message).toContain('spam');

    server.replies.push({ kind: 'error', code: 554, message: 'Message rejected as spam' }, { kind: 'ok' });
    const err = await caught(sendWithRetry(provider, payload, { notificationId: 'ntf_5xx', budgetMs: 10_000, log: silentLogger }));
    expect(err).toBeInstanceOf(NotifyError);
    expect((err as NotifyError).code).toBe('PROVIDER_REJECTED');
    expect(sendFailureInfo(err)?.attempts).toBe(1);
    expect(server.dataCount() - before).toBe(2);
  });

  it('maps a refused recipient (550 at RCPT TO) to ProviderRejectedError naming the recipient stage', async () => {
    server.rejectRecipients.add('ghost@example.com');
    try {
      const before = server.dataCount();
      const err = await caught(
        provider.send(await buildPayload('ntf_550', ['ghost@example.com']), { notificationId: 'ntf_550', signal: signal() }),
      );
      expect(err).toBeInstanceOf(ProviderRejectedError);
      expect((err as ProviderRejectedError).vendorCode).toBe(550);
      expect((err as Error).message).toContain('recipient');
      expect(server.dataCount()).toBe(before);
    } finally {
      server.rejectRecipients.clear();
    }
  });

  it('maps a refused connection to ProviderTransientError', async () => {
    const closed = await startSmtpServer();
    const port = closed.port;
    await closed.close();
    const p = await createSmtpProvider({ url: `smtp://127.0.0.1:${port}`, log: silentLogger, pool: false });
    extra.push(p);
    const err = await caught(p.send(await buildPayload('ntf_refused'), { notificationId: 'ntf_refused', signal: signal() }));
    expect(err).toBeInstanceOf(ProviderTransientError);
    expect((err as ProviderTransientError).vendorCode).toBe('ECONNREFUSED');
  });

  it('maps a server that goes silent after DATA to DeliveryUnknownError, bounded by the socket timeout', async () => {
    const p = await createSmtpProvider({ url: server.url, log: silentLogger, pool: false, timeoutsMs: { socket: 500 } });
    extra.push(p);
    server.replies.push({ kind: 'hang' });
    const err = await caught(p.send(await buildPayload('ntf_hang'), { notificationId: 'ntf_hang', signal: signal() }));
    expect(err).toBeInstanceOf(DeliveryUnknownError);
  });

  it('turns a hang past the budget into DELIVERY_UNKNOWN through sendWithRetry, not a retry', async () => {
    const p = await createSmtpProvider({ url: server.url, log: silentLogger, timeoutsMs: { socket: 30_000 } });
    extra.push(p);
    server.replies.push({ kind: 'hang' }, { kind: 'ok' });
    const before = server.dataCount();
    const err = await caught(
      sendWithRetry(p, await buildPayload('ntf_budget'), { notificationId: 'ntf_budget', budgetMs: 800, log: silentLogger }),
    );
    expect((err as NotifyError).code).toBe('DELIVERY_UNKNOWN');
    expect(server.dataCount() - before).toBe(1);
  });

  it('turns a server that never greets into PROVIDER_UNAVAILABLE within the budget (nothing was handed over)', async () => {
    const sockets: Socket[] = [];
    const silent = createTcpServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const p = await createSmtpProvider({ url: `smtp://127.0.0.1:${port}`, log: silentLogger, timeoutsMs: { greeting: 30_000 } });
      extra.push(p);
      const err = await caught(
        sendWithRetry(p, await buildPayload('ntf_nogreet'), { notificationId: 'ntf_nogreet', budgetMs: 700, log: silentLogger }),
      );
      expect((err as NotifyError).code).toBe('PROVIDER_UNAVAILABLE');
      expect((err as NotifyError).details.retryAfterS).toBeGreaterThanOrEqual(1);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

/**
 * An SMTP peer that confirms a message only when the test says so: what it observes (who
 * arrived, in what order, how many were open at once, whose whole body it has) depends on
 * the client alone, not on how fast the machine is. A message's key is its first recipient;
 * it arrives at RCPT TO and is open until confirmed or hung up.
 */
async function startGatedSmtpPeer() {
  const peer = { arrivals: [] as Arrival[], bodies: [] as string[], open: 0, maxOpen: 0 };
  const current = new Map<string, Arrival>();
  const held: { key: string; confirm(): void }[] = [];
  const changed = new Set<() => void>();
  const notify = () => {
    for (const f of changed) f();
  };
  const server = new SMTPServer({
    secure: false,
    hideSTARTTLS: true,
    authOptional: true,
    logger: false,
    disableReverseLookup: true,
    onRcptTo(address, session, callback) {
      if (!current.has(session.id)) {
        const arrival: Arrival = { key: address.address, arrivedAt: performance.now() };
        peer.arrivals.push(arrival);
        current.set(session.id, arrival);
        peer.maxOpen = Math.max(peer.maxOpen, ++peer.open);
        notify();
      }
      callback();
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        const arrival = current.get(session.id);
        if (!arrival) return;
        peer.bodies.push(arrival.key);
        held.push({
          key: arrival.key,
          confirm: () => {
            if (current.get(session.id) !== arrival) return; // the client hung up meanwhile
            current.delete(session.id);
            peer.open--;
            arrival.answeredAt = performance.now();
            callback(null, 'Ok');
          },
        });
        notify();
      });
    },
    onClose(session) {
      const arrival = current.get(session.id);
      if (!arrival) return;
      current.delete(session.id);
      peer.open--;
      arrival.abortedAt = performance.now();
      notify();
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  return {
    url,
    origin: url,
    /** Messages open now. */
    get open() {
      return peer.open;
    },
    get arrivals() {
      return peer.arrivals;
    },
    get bodies() {
      return peer.bodies;
    },
    maxOpen: () => peer.maxOpen,
    /** Resolves once `test` holds of what the peer has seen. */
    until: (test: () => boolean) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!test()) return;
          changed.delete(check);
          resolve();
        };
        changed.add(check);
        check();
      }),
    /** Confirms the oldest message held with its whole body; its key. */
    confirmOldest: () => {
      const next = held.shift();
      next?.confirm();
      return next?.key;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const conn of (server as unknown as { connections: Set<{ close(): void }> }).connections ?? []) conn.close();
        server.close(() => resolve());
      }),
  };
}

describe('SMTP provider under a burst against a slow SMTP server (issue 16: nothing reaches it after its call answered)', () => {
  const keys = Array.from({ length: 6 }, (_, i) => `wave-${i}@example.com`);
  const send = (provider: Provider<EmailPayload>, budgetMs: number) => async (to: string) =>
    sendWithRetry(provider, await buildPayload(`ntf_${to.split('@')[0]}`, [to]), {
      notificationId: `ntf_${to}`,
      budgetMs,
      log: silentLogger,
    });

  it('runs at most maxConcurrent messages (and pool connections) at once; the next ones go in order as slots free', async () => {
    const peer = await startGatedSmtpPeer();
    // A budget nothing here comes near: what is observed depends on the client alone.
    const provider = await createSmtpProvider({ url: peer.url, log: silentLogger, maxConcurrent: 2, timeoutsMs: { socket: 60_000 } });
    try {
      const answers = burst(keys, send(provider, 120_000));
      for (let confirmed = 0; confirmed < keys.length; confirmed++) {
        // Two in flight (fewer at the end), each with its whole body at the peer...
        const inFlight = Math.min(2, keys.length - confirmed);
        await peer.until(() => peer.bodies.length === confirmed + inFlight);
        // ...and no other message even begun while they are held: the client is what waits.
        await sleep(200);
        expect(peer.arrivals.map((a) => a.key)).toEqual(keys.slice(0, confirmed + inFlight));
        expect(peer.open).toBe(inFlight);
        expect(peer.confirmOldest()).toBe(keys[confirmed]);
      }
      const done = await answers;
      expect(done.map((a) => a.code)).toEqual(keys.map(() => 'sent'));
      expectNothingAfterAnswer(done, peer, 2);
      expect(peer.maxOpen()).toBe(2);
    } finally {
      await provider.close?.();
      await peer.close();
    }
  });

  it('at the budget, cuts off what is handed over and drops unsent what never got a slot', async () => {
    const peer = await startGatedSmtpPeer();
    const provider = await createSmtpProvider({ url: peer.url, log: silentLogger, maxConcurrent: 2, timeoutsMs: { socket: 60_000 } });
    try {
      // Nothing is ever confirmed: the two holding the slots keep them until the budget ends.
      const answers = await burst(keys, send(provider, 2_000));
      await sleep(500); // whatever a queue still held would arrive now
      expectNothingAfterAnswer(answers, peer, 2);
      const codes = new Map(answers.map((a) => [a.key, a.code]));
      // Only the first two ever reached the peer; whichever got its whole body over is unknown,
      // one cut off before that is transient (the stall phases are tested above).
      expect(peer.arrivals.map((a) => a.key).every((k) => keys.slice(0, 2).includes(k))).toBe(true);
      for (const key of keys.slice(0, 2)) {
        expect(codes.get(key)).toBe(peer.bodies.includes(key) ? 'DELIVERY_UNKNOWN' : 'PROVIDER_UNAVAILABLE');
      }
      for (const key of keys.slice(2)) expect(codes.get(key)).toBe('RATE_LIMITED');
    } finally {
      await provider.close?.();
      await peer.close();
    }
  });
});

/**
 * A raw SMTP peer that answers every command until `stallAt`, then says nothing: the phase
 * decides whether the message can be with it. `BODY` takes DATA (354) and the whole body,
 * then never confirms it.
 */
type Phase = 'MAIL' | 'RCPT' | 'DATA' | 'BODY';
async function stallingPeer(stallAt: Phase) {
  const sockets: Socket[] = [];
  let bodies = 0;
  const server = createTcpServer((s) => {
    sockets.push(s);
    s.on('error', () => {});
    s.write('220 stall.test ESMTP\r\n');
    let buffer = '';
    let inBody = false;
    s.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      for (;;) {
        if (inBody) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          buffer = buffer.slice(end + 5);
          inBody = false;
          bodies++;
          if (stallAt === 'BODY') return;
          s.write('250 2.0.0 Ok: queued as STALL1\r\n');
          continue;
        }
        const nl = buffer.indexOf('\r\n');
        if (nl < 0) return;
        const line = buffer.slice(0, nl).toUpperCase();
        buffer = buffer.slice(nl + 2);
        const verb = line.startsWith('MAIL')
          ? 'MAIL'
          : line.startsWith('RCPT')
            ? 'RCPT'
            : line.startsWith('DATA')
              ? 'DATA'
              : line.split(' ')[0];
        if (verb === stallAt) return;
        if (verb === 'EHLO') s.write('250-stall.test\r\n250 8BITMIME\r\n');
        else if (verb === 'DATA') {
          s.write('354 go ahead\r\n');
          inBody = true;
        } else if (verb === 'QUIT') s.end('221 bye\r\n');
        else s.write('250 OK\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies: () => bodies,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('SMTP stalls: unknown only once the body went over (a relay that stops answering)', () => {
  const opened: Provider<EmailPayload>[] = [];
  afterAll(async () => {
    for (const p of opened) await p.close?.();
  });

  it.each(['MAIL', 'RCPT', 'DATA'] as const)(
    'a stall at %s sent nothing: PROVIDER_UNAVAILABLE with retry_after_s, through the budget and the socket timeout alike',
    async (phase) => {
      const peer = await stallingPeer(phase);
      try {
        const p = await createSmtpProvider({ url: peer.url, log: silentLogger, timeoutsMs: { socket: 30_000 } });
        opened.push(p);
        const err = await caught(
          sendWithRetry(p, await buildPayload(`ntf_stall_${phase}`), {
            notificationId: `ntf_stall_${phase}`,
            budgetMs: 700,
            log: silentLogger,
          }),
        );
        expect((err as NotifyError).code).toBe('PROVIDER_UNAVAILABLE');
        expect((err as NotifyError).details.retryAfterS).toBeGreaterThanOrEqual(1);
        expect((err as NotifyError).message).toMatch(/nothing was sent/);

        const timedOut = await createSmtpProvider({ url: peer.url, log: silentLogger, pool: false, timeoutsMs: { socket: 300 } });
        opened.push(timedOut);
        expect(
          await caught(timedOut.send(await buildPayload('ntf_stall_t'), { notificationId: 'ntf_stall_t', signal: signal() })),
        ).toBeInstanceOf(ProviderTransientError);
        expect(peer.bodies()).toBe(0);
      } finally {
        await peer.close();
      }
    },
  );

  it('a stall after the whole body went over may have left it with the relay: DELIVERY_UNKNOWN', async () => {
    const peer = await stallingPeer('BODY');
    try {
      const p = await createSmtpProvider({ url: peer.url, log: silentLogger, timeoutsMs: { socket: 30_000 } });
      opened.push(p);
      const err = await caught(
        sendWithRetry(p, await buildPayload('ntf_stall_body'), { notificationId: 'ntf_stall_body', budgetMs: 700, log: silentLogger }),
      );
      expect((err as NotifyError).code).toBe('DELIVERY_UNKNOWN');
      const timedOut = await createSmtpProvider({ url: peer.url, log: silentLogger, pool: false, timeoutsMs: { socket: 300 } });
      opened.push(timedOut);
      expect(
        await caught(timedOut.send(await buildPayload('ntf_stall_bt'), { notificationId: 'ntf_stall_bt', signal: signal() })),
      ).toBeInstanceOf(DeliveryUnknownError);
      expect(peer.bodies()).toBe(2);
    } finally {
      await peer.close();
    }
  });
});
