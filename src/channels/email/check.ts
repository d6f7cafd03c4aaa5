/**
 * `notify-mcp doctor` for live email, through nodemailer's SMTPConnection: it connects, does
 * STARTTLS when the server offers it (or TLS for smtps://), then
 * - with credentials in SMTP_URL, refuses to send them over a connection that stayed
 *   unencrypted (unless the relay is on this machine), and otherwise logs in (AUTH);
 * - without them, asks the relay to take a sender and a recipient, as a send would, so a
 *   relay that requires AUTH fails here and not on every send (`PROVIDER_REJECTED`); the
 *   transaction is dropped before any byte of a message, so nothing is sent.
 * It quits without a message. The URL's password never appears in a line.
 */
import { PassThrough } from 'node:stream';
import type SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import { fail, pass, type Check, type CheckContext } from '../../core/check.js';

/** nodemailer's error codes, in words with the fix. */
const FIXES: Record<string, string> = {
  EAUTH: 'check the user and password in SMTP_URL (smtp://user:pass@host:587)',
  ETLS: 'use smtps:// for implicit TLS (port 465), smtp:// for STARTTLS (port 587)',
  ECONNECTION: 'check the host and port in SMTP_URL, and that this machine can reach them',
  ESOCKET: 'check the host and port in SMTP_URL, and whether the port expects TLS (smtps://) or STARTTLS (smtp://)',
  ETIMEDOUT: 'check the host and port in SMTP_URL, and any firewall between this machine and it',
  EDNS: 'check the host name in SMTP_URL',
};

const SET_CREDENTIALS =
  'set SMTP credentials: put the user and password in SMTP_URL (smtp://user:pass@host:587); until then every send is refused';
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

/** A refusal that means "authenticate first": 530 (RFC 4954), or a 5.7.0 / words that say so. */
function wantsAuth(err: { responseCode?: number; response?: string; message?: string }): boolean {
  return (
    err.responseCode === 530 ||
    /\b5\.7\.0\b|auth(entication)? (is )?required|authenticate first|must authenticate/i.test(`${err.response ?? ''} ${err.message ?? ''}`)
  );
}

export async function checkSmtp(smtpUrl: string, ctx: CheckContext, probeAddress = 'notify-mcp-doctor@localhost'): Promise<Check[]> {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  const port = Number(url.port) || (secure ? 465 : 587);
  const where = `${url.hostname}:${port}`;
  const hide = (text: string) =>
    url.password ? text.replaceAll(decodeURIComponent(url.password), '***').replaceAll(url.password, '***') : text;
  const { default: Connection } = (await import('nodemailer/lib/smtp-connection/index.js')) as unknown as {
    default: typeof SMTPConnection;
  };
  const connection = new Connection({
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port,
    secure,
    connectionTimeout: ctx.timeoutMs,
    greetingTimeout: ctx.timeoutMs,
    socketTimeout: ctx.timeoutMs,
    logger: false,
  });
  connection.on('error', () => {}); // each step reports its own failure below
  const refused = (err: unknown): Check[] => {
    const e = err as { code?: string; message?: string; responseCode?: number };
    const code = e.code ?? (/(certificate|TLS|SSL)/i.test(e.message ?? '') ? 'ETLS' : 'ECONNECTION');
    const fix = FIXES[code] ?? FIXES.ECONNECTION!;
    return [fail('email smtp', `${where} refused: ${code}${e.responseCode ? ` ${e.responseCode}` : ''} (${hide(e.message ?? '')})`, fix)];
  };
  try {
    try {
      await new Promise<void>((resolve, reject) => {
        connection.once('error', reject);
        connection.connect(() => resolve());
      });
    } catch (err) {
      return refused(err);
    }
    const encrypted = connection.secure;
    const tls = secure ? ' over TLS' : encrypted ? ' with STARTTLS' : ' unencrypted (it offered no STARTTLS)';
    if (url.username) {
      if (!encrypted && !LOOPBACK.test(url.hostname)) {
        return [
          fail(
            'email smtp',
            `${where} accepted the connection unencrypted (it offered no STARTTLS), so AUTH would send the SMTP password in clear text; it was not sent`,
            'use smtps:// (port 465) or a relay that offers STARTTLS on port 587',
          ),
        ];
      }
      try {
        await new Promise<void>((resolve, reject) =>
          connection.login({ user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }, (err) =>
            err ? reject(err) : resolve(),
          ),
        );
      } catch (err) {
        return refused(err);
      }
      const note = encrypted ? '' : ' (AUTH unencrypted: the relay is on this machine)';
      return [pass('email smtp', `${where} accepted the connection${tls} and the credentials (AUTH)${note}; nothing was sent`)];
    }
    const probe = await envelopeProbe(connection, probeAddress);
    if (probe !== 'accepted' && wantsAuth(probe)) {
      return [
        fail(
          'email smtp',
          `${where} requires AUTH and SMTP_URL has no credentials: it answered ${probe.responseCode ?? ''} (${hide(probe.message ?? '')}); nothing was sent`,
          SET_CREDENTIALS,
        ),
      ];
    }
    const took =
      probe === 'accepted'
        ? 'took a sender without AUTH'
        : `refused the test sender ${probeAddress} (${hide(probe.message ?? '')}), not for want of AUTH`;
    return [pass('email smtp', `${where} accepted the connection${tls}; no credentials in SMTP_URL, and it ${took}; nothing was sent`)];
  } finally {
    connection.close();
  }
}

/**
 * MAIL FROM and RCPT TO, as a send begins; the connection is dropped at the first sign that
 * DATA was accepted (nodemailer starts reading the message), before a byte of it is written.
 */
function envelopeProbe(
  connection: SMTPConnection,
  address: string,
): Promise<'accepted' | { responseCode?: number; message?: string; response?: string }> {
  return new Promise((resolve) => {
    const message = new PassThrough();
    message.once('resume', () => {
      resolve('accepted');
      connection.close();
    });
    connection.send({ from: address, to: [address] }, message, (err) =>
      resolve(err ? (err as { responseCode?: number; message?: string }) : 'accepted'),
    );
  });
}
