/**
 * Email over SMTP with nodemailer: sends the pipeline's exact MIME bytes with the recorded
 * envelope (`sendMail({ envelope, raw })`), so the delivery log holds what went over the wire,
 * and tells a failure before the message was handed over (retried) from one after it
 * (DELIVERY_UNKNOWN).
 */
import { PassThrough, type Readable } from 'node:stream';
import type { Logger } from '../../core/log.js';
import { DeliveryUnknownError, failedAt, ProviderError, ProviderRejectedError, ProviderTransientError } from '../../providers/errors.js';
import { DEFAULT_PROVIDER_CONCURRENCY, Slots } from '../../providers/slots.js';
import type { Provider, ProviderReceipt } from '../../providers/types.js';
import { relayName } from './relays.js';

/** Email as it goes over SMTP: the envelope and the complete MIME message. */
export interface EmailPayload {
  envelope: { from: string; to: string[] };
  messageId: string;
  /** The complete RFC 5322 message as nodemailer builds it. */
  raw: string;
  /** The bcc fields as given: on the envelope, in no header (recorded so that the record shows them). */
  bcc?: string[];
  /** Each attachment as it is in `raw`: name, type, decoded size, SHA-256. */
  attachments?: { filename: string; content_type: string; size: number; sha256: string }[];
}

export interface SmtpTimeouts {
  /** TCP connect. */
  connection?: number;
  /** The server's 220 greeting. */
  greeting?: number;
  /** Inactivity on an open socket (nodemailer's default is 10 minutes). */
  socket?: number;
}

export interface SmtpProviderOptions {
  /** `smtp://user:pass@host:587` or `smtps://…`; nodemailer reads TLS and auth from it. */
  url: string;
  /** Reuse connections (default true). */
  pool?: boolean;
  timeoutsMs?: SmtpTimeouts;
  /** Messages in flight at once, and the pool's connection count (default DEFAULT_PROVIDER_CONCURRENCY). */
  maxConcurrent?: number;
  log: Logger;
}

/** Errors of sends whose whole message reached the server: after one, no other relay may be tried (./failover.ts). */
export const handedOverErrors = new WeakSet<ProviderError>();

/** The sendMail option (a plain key: nodemailer copies own string keys into mail.data) our stream stage reports to. */
const HANDED_OVER = 'notifyHandedOver';

/** What nodemailer attaches to its errors (see its NodemailerError). */
interface SmtpErrorShape {
  code?: string;
  originalCode?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  permanent?: boolean;
  message?: string;
  name?: string;
}

const PERMANENT_CODES = new Set([
  'EAUTH',
  'ENOAUTH',
  'EOAUTH2',
  'ECONFIG',
  'EENVELOPE',
  'EMESSAGE',
  'EMAXRECIPIENTS',
  'EFILEACCESS',
  'EURLACCESS',
  'EREQUIRETLS',
]);

/** A reply line for a message, without the code: the model reads it. */
function replyText(e: SmtpErrorShape): string {
  return (e.response ?? e.message ?? 'no reply').replace(/\s+/g, ' ').trim();
}

/**
 * Maps a nodemailer error to a provider error. `handedOver`: the whole message went to the
 * server, so a failure without an SMTP reply leaves its fate unknown. Until the whole body has
 * gone to the connection, after the server answered DATA with 354, the server cannot have the
 * message: a stall or a drop at the greeting, EHLO, MAIL, RCPT or DATA sent nothing and is
 * retried. nodemailer reads a raw message into memory before it connects, so its input says
 * nothing; the last stage of its message stream does, because that stream ends only once the
 * connection's data stream has read all of it (HANDED_OVER).
 */
export function classifySmtpError(err: unknown, handedOver: boolean): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = (err ?? {}) as SmtpErrorShape;
  const code = e.responseCode ?? e.code;
  if (e.code === 'EAUTH' || e.code === 'ENOAUTH' || e.code === 'EOAUTH2') {
    return new ProviderRejectedError(
      'smtp',
      `the SMTP server refused the login (${replyText(e)}); the operator must fix the credentials in SMTP_URL, resending will not help`,
      code,
      err,
    );
  }
  if (typeof e.responseCode === 'number' && e.responseCode >= 400) {
    const permanent = e.permanent ?? (e.responseCode >= 500 && e.responseCode !== 503);
    if (permanent) {
      const stage = e.command === 'RCPT TO' ? 'a recipient' : e.command === 'MAIL FROM' ? 'the sender' : 'the message';
      return new ProviderRejectedError(
        'smtp',
        `the SMTP server refused ${stage} (${replyText(e)}); change the recipients or the content, sending it unchanged will fail again`,
        e.responseCode,
        err,
      );
    }
    return new ProviderTransientError('smtp', `the SMTP server deferred the message (${replyText(e)})`, {
      vendorCode: e.responseCode,
      cause: err,
    });
  }
  if (e.code && PERMANENT_CODES.has(e.code)) {
    return new ProviderRejectedError('smtp', `nodemailer refused the message (${e.code}: ${e.message ?? ''})`, e.code, err);
  }
  const vendorCode = e.originalCode ?? e.code ?? e.name;
  const budget = e.name === 'BudgetExceededError';
  if (handedOver) {
    return new DeliveryUnknownError(
      'smtp',
      budget
        ? "the send's budget ran out after the message was handed to the SMTP server and before it confirmed"
        : `the connection failed after the message was handed to the SMTP server (${vendorCode ?? 'error'}) and before it confirmed`,
      vendorCode,
      err,
    );
  }
  return new ProviderTransientError(
    'smtp',
    budget
      ? "the send's budget ran out before the message was handed to the SMTP server; nothing was sent"
      : `could not reach the SMTP server (${vendorCode ?? 'error'})`,
    { vendorCode, cause: err },
  );
}

/** The server's queue id from its final reply (`250 2.0.0 Ok: queued as 4XyZ`), if it names one. */
export function queueIdFromResponse(response: string | undefined): string | undefined {
  if (!response) return undefined;
  const m = /queued as ([A-Za-z0-9._@<>-]+)/i.exec(response) ?? /\b(?:id|queue-id)[=: ]+([A-Za-z0-9._@<>-]+)/i.exec(response);
  return m?.[1];
}

export async function createSmtpProvider(opts: SmtpProviderOptions): Promise<Provider<EmailPayload>> {
  const { createTransport } = await import('nodemailer');
  const t = opts.timeoutsMs ?? {};
  const slots = new Slots('smtp', opts.maxConcurrent ?? DEFAULT_PROVIDER_CONCURRENCY);
  const transport = createTransport({
    url: opts.url,
    pool: opts.pool ?? true,
    // One connection per slot, so the pool's own queue stays empty; a message it would hold
    // is still dropped there at the budget (the signal below), never sent late.
    maxConnections: slots.limit,
    // nodemailer's defaults are minutes; a send has a budget of seconds.
    connectionTimeout: t.connection ?? 10_000,
    greetingTimeout: t.greeting ?? 10_000,
    socketTimeout: t.socket ?? 15_000,
    // The pool would resend a message whose connection closed mid-send, possibly after the
    // server took it; retries belong to sendWithRetry, which knows what is safe.
    maxRequeues: 0,
    // The raw message is ours; nothing in it may make nodemailer read files or fetch URLs.
    disableFileAccess: true,
    disableUrlAccess: true,
    logger: false,
  } as Parameters<typeof createTransport>[0]);
  // Each message's stream gets a last stage that reports when the connection read it all.
  transport.use('stream', (mail, done) => {
    const onHandedOver = (mail.data as { [HANDED_OVER]?: () => void })[HANDED_OVER];
    if (onHandedOver) {
      mail.message.processFunc((input: Readable) => {
        const last = new PassThrough();
        last.once('end', onHandedOver);
        input.on('error', (err) => last.destroy(err));
        return input.pipe(last);
      });
    }
    done();
  });
  const log = opts.log.child({ provider: 'smtp' });
  // Every attempt names its relay: host and port, never the credentials in the URL.
  const endpoint = { name: relayName(opts.url) };

  return {
    name: 'smtp',
    callsStarting: true,
    async send(payload: EmailPayload, ctx): Promise<ProviderReceipt> {
      let handedOver = false;
      try {
        // nodemailer closes the connection of an aborted message, or drops it from the pool's queue.
        const info = (await slots.run(ctx, () =>
          transport.sendMail({
            envelope: { from: payload.envelope.from, to: payload.envelope.to },
            raw: payload.raw,
            signal: ctx.signal,
            [HANDED_OVER]: () => {
              handedOver = true;
            },
          } as Parameters<typeof transport.sendMail>[0]),
        )) as { response?: string; serverMessageId?: string; messageId?: string };
        const id = info.serverMessageId ?? queueIdFromResponse(info.response) ?? payload.messageId;
        // The relay's reply ("250 2.0.0 Ok: queued as …"): acceptance, not delivery.
        return info.response
          ? { providerMessageId: id, providerStatus: info.response.slice(0, 200), endpoint }
          : { providerMessageId: id, endpoint };
      } catch (err) {
        const mapped = failedAt(
          classifySmtpError(ctx.signal.aborted && !hasReply(err) ? (ctx.signal.reason ?? err) : err, handedOver),
          endpoint,
        );
        if (handedOver) handedOverErrors.add(mapped);
        log.debug('smtp send failed', { notificationId: ctx.notificationId, kind: mapped.name, code: mapped.vendorCode });
        throw mapped;
      }
    },
    async close() {
      transport.close();
    },
  };
}

function hasReply(err: unknown): boolean {
  return typeof (err as SmtpErrorShape | undefined)?.responseCode === 'number';
}
