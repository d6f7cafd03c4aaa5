/**
 * Twilio and Slack adapters against raw TCP fakes on loopback: a request whose body never
 * left (the TLS handshake failed, the connection was closed or refused first) sent nothing
 * and is transient; one whose whole body was written and then got no answer may have been
 * delivered, and is DELIVERY_UNKNOWN.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { createSlackProvider } from '../../src/channels/slack/web-api.js';
import { createTwilioProvider } from '../../src/channels/sms/twilio.js';
import type { Provider } from '../../src/providers/types.js';
import { caught } from '../helpers/caught.js';

type Mode = 'close-on-accept' | 'plaintext-answer' | 'read-then-stall';

/** A TCP peer: closes each connection at once, answers it in plain text, or reads it all and says nothing. */
async function rawPeer(mode: Mode) {
  const sockets: Socket[] = [];
  let bytesRead = 0;
  const server = createServer((s) => {
    sockets.push(s);
    s.on('error', () => {});
    if (mode === 'close-on-accept') s.destroy();
    else if (mode === 'plaintext-answer') s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
    else s.on('data', (c: Buffer) => (bytesRead += c.length));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    bytesRead: () => bytesRead,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const providers = {
  twilio: async (apiUrl: string) =>
    ({
      provider: await createTwilioProvider({
        accountSid: `AC${'0'.repeat(32)}`,
        authToken: 'secret',
        apiUrl,
        timeoutMs: 1_000,
        log: silentLogger,
      }),
      payload: { To: '+14155550100', From: '+14155550199', Body: 'Disk 91% on db-1' },
    }) as { provider: Provider<unknown>; payload: unknown },
  slack: async (apiUrl: string) =>
    ({
      provider: await createSlackProvider({ token: 'xoxb-test', apiUrl, timeoutMs: 1_000, log: silentLogger }),
      payload: { channel: 'C0123456789', text: 'Disk 91% on db-1' },
    }) as { provider: Provider<unknown>; payload: unknown },
};

describe.each(Object.keys(providers) as (keyof typeof providers)[])('%s: was the request written?', (name) => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0)) await f();
  });

  async function sendTo(scheme: 'http' | 'https', mode: Mode) {
    const peer = await rawPeer(mode);
    cleanup.push(peer.close);
    const { provider, payload } = await providers[name](`${scheme}://127.0.0.1:${peer.port}`);
    cleanup.push(async () => provider.close?.());
    const err = await caught(provider.send(payload, { notificationId: 'ntf_written', signal: new AbortController().signal }));
    return { err: err as { name: string; vendorCode?: unknown }, peer };
  }

  it.each<Mode>(['close-on-accept', 'plaintext-answer'])('a TLS handshake that fails (%s) sent nothing: transient', async (mode) => {
    const { err } = await sendTo('https', mode);
    expect(err.name).toBe('ProviderTransientError');
  });

  it('a refused connection sent nothing: transient', async () => {
    const peer = await rawPeer('close-on-accept');
    await peer.close();
    const { provider, payload } = await providers[name](`http://127.0.0.1:${peer.port}`);
    cleanup.push(async () => provider.close?.());
    const err = (await caught(provider.send(payload, { notificationId: 'ntf_refused', signal: new AbortController().signal }))) as {
      name: string;
    };
    expect(err.name).toBe('ProviderTransientError');
  });

  it('a request read whole and never answered may have been delivered: DELIVERY_UNKNOWN', async () => {
    const { err, peer } = await sendTo('http', 'read-then-stall');
    expect(peer.bytesRead()).toBeGreaterThan(0);
    expect(err.name).toBe('DeliveryUnknownError');
  });
});
