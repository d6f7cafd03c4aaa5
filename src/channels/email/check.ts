/**
 * `notify-mcp doctor` for live email: nodemailer's verify() connects, does STARTTLS when the
 * server offers it (or TLS for smtps://) and AUTH when SMTP_URL carries credentials, then
 * quits without a message. The URL's password never appears in a line.
 */
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

export async function checkSmtp(smtpUrl: string, ctx: CheckContext): Promise<Check[]> {
  const url = new URL(smtpUrl);
  const where = `${url.hostname}:${url.port || (url.protocol === 'smtps:' ? 465 : 587)}`;
  const { createTransport } = await import('nodemailer');
  const transport = createTransport({
    url: smtpUrl,
    connectionTimeout: ctx.timeoutMs,
    greetingTimeout: ctx.timeoutMs,
    socketTimeout: ctx.timeoutMs,
    logger: false,
  } as Parameters<typeof createTransport>[0]);
  try {
    await transport.verify();
    const tls = url.protocol === 'smtps:' ? ' over TLS' : ' (STARTTLS when the server offers it)';
    const auth = url.username ? ' and the credentials (AUTH)' : '; no credentials in SMTP_URL, so no AUTH was tried';
    return [pass('email smtp', `${where} accepted the connection${tls}${auth}; nothing was sent`)];
  } catch (err) {
    const e = err as { code?: string; message?: string; responseCode?: number };
    const code = e.code ?? (/(certificate|TLS|SSL)/i.test(e.message ?? '') ? 'ETLS' : 'ECONNECTION');
    const fix = FIXES[code] ?? FIXES.ECONNECTION!;
    return [fail('email smtp', `${where} refused: ${code}${e.responseCode ? ` ${e.responseCode}` : ''} (${(e.message ?? '').replaceAll(url.password || '\u0000', '***')})`, fix)];
  } finally {
    transport.close();
  }
}
