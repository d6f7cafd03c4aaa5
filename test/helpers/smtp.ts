/**
 * A real SMTP peer for contract tests: smtp-server on a free loopback port, recording what
 * it receives, with scriptable replies (4xx, 5xx, silence) per message.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  user?: string;
}

/** What the server does with the next message's DATA; `ok` by default. */
export type DataReply = { kind: 'ok'; queueId?: string } | { kind: 'error'; code: number; message: string } | { kind: 'hang' };

export interface TestSmtpServer {
  port: number;
  /** `smtp://user:pass@127.0.0.1:port` */
  url: string;
  received: ReceivedMail[];
  /** Replies for the next messages, in order; each message takes one. */
  replies: DataReply[];
  /** Recipients refused at RCPT TO with 550. */
  rejectRecipients: Set<string>;
  /** Counts DATA commands, accepted or not. */
  dataCount(): number;
  close(): Promise<void>;
}

export const SMTP_USER = 'notify';
export const SMTP_PASS = 'correct-horse';

/** `host`: where it listens (default loopback); `authOptional`: a relay that takes mail without AUTH. */
export async function startSmtpServer(opts: { host?: string; authOptional?: boolean } = {}): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const replies: DataReply[] = [];
  const rejectRecipients = new Set<string>();
  let dataCount = 0;
  const options: SMTPServerOptions = {
    secure: false,
    hideSTARTTLS: true,
    allowInsecureAuth: true,
    authOptional: opts.authOptional ?? false,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    disableReverseLookup: true,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASS) return callback(null, { user: auth.username });
      return callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      if (rejectRecipients.has(address.address.toLowerCase())) {
        return callback(Object.assign(new Error(`No such user <${address.address}>`), { responseCode: 550 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      dataCount++;
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const reply = replies.shift() ?? { kind: 'ok' };
        if (reply.kind === 'hang') return; // never answer: the client's socket timeout decides
        if (reply.kind === 'error') {
          return callback(Object.assign(new Error(reply.message), { responseCode: reply.code }));
        }
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          user: typeof session.user === 'string' ? session.user : undefined,
        });
        callback(null, reply.queueId ? `Ok: queued as ${reply.queueId}` : 'Ok');
      });
    },
  };
  const server = new SMTPServer(options);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, opts.host ?? '127.0.0.1', () => resolve());
  });
  // A sender killed mid-session (a SIGKILLed process) resets its socket; smtp-server reports
  // that as a server error, which is the test's subject, not a failure of the peer.
  server.on('error', () => {});
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://${SMTP_USER}:${SMTP_PASS}@127.0.0.1:${port}`,
    received,
    replies,
    rejectRecipients,
    dataCount: () => dataCount,
    close: () =>
      new Promise<void>((resolve) => {
        // smtp-server waits for open sessions (a hung one included) unless told otherwise
        for (const conn of (server as unknown as { connections: Set<{ close(): void }> }).connections ?? []) conn.close();
        server.close(() => resolve());
      }),
  };
}
