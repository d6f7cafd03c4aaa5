/**
 * The webhook provider against local receivers: status handling (2xx sent, 410 permanent,
 * 429 and 5xx retried honouring Retry-After with the same webhook-id, no answer after the
 * request was written unknown and never sent twice), the fallback tried only when the
 * target clearly did not accept, and the network rules: no redirect followed, no private
 * address reached, judged on the address the socket uses (a name resolving to 127.0.0.1 or
 * 10.x, and a DNS answer that changes between a check and a connect).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/store/audit.js';
import { silentLogger } from '../../src/core/log.js';
import { sendWithRetry, sendFailureInfo } from '../../src/providers/retry.js';
import type { Resolve } from '../../src/channels/webhook/address.js';
import { createWebhookProvider, type WebhookRequest } from '../../src/channels/webhook/http.js';
import type { WebhookTarget } from '../../src/channels/webhook/targets.js';

interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}
type Reply = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/** A receiver on loopback answering scripted replies in order (200 when none is left). */
async function receiver() {
  const seen: Seen[] = [];
  const replies: Reply[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, body });
      const reply = replies.shift() ?? { status: 200 };
      if (reply === 'hang') return;
      res.writeHead(reply.status, reply.headers);
      res.end(reply.body ?? '');
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    seen,
    replies,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

type Receiver = Awaited<ReturnType<typeof receiver>>;
let main: Receiver;
let other: Receiver;
const providers: { close?: () => Promise<void> }[] = [];

beforeAll(async () => {
  main = await receiver();
  other = await receiver();
});
afterAll(async () => {
  await main.close();
  await other.close();
});
afterEach(async () => {
  main.seen.length = 0;
  main.replies.length = 0;
  other.seen.length = 0;
  other.replies.length = 0;
  await Promise.all(providers.splice(0).map((p) => p.close?.()));
});

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

function provider(targets: WebhookTarget[], opts: { privateHosts?: string[]; resolve?: Resolve; timeoutMs?: number } = {}) {
  const p = createWebhookProvider({
    targets,
    privateHosts: opts.privateHosts ?? ['127.0.0.1'],
    timeoutMs: opts.timeoutMs ?? 2_000,
    log: silentLogger,
    ...(opts.resolve ? { resolve: opts.resolve } : {}),
  });
  providers.push(p);
  return p;
}

const request = (target: string, fallback?: WebhookRequest): WebhookRequest => ({
  target,
  format: 'standard',
  method: 'POST',
  url: 'http://127.0.0.1/…',
  headers: { 'content-type': 'application/json', 'webhook-id': 'ntf_1', 'webhook-timestamp': '0', 'webhook-signature': 'v1,<redacted>' },
  body: '{"type":"notification","id":"ntf_1","title":null,"text":"hi","fields":[]}',
  ...(fallback ? { fallback } : {}),
});

const send = (p: ReturnType<typeof provider>, payload: WebhookRequest, budgetMs = 5_000) =>
  sendWithRetry(p, payload, { notificationId: 'ntf_1', budgetMs, log: silentLogger, baseDelayMs: 1, random: () => 0 });

async function failure(p: Promise<unknown>) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the send should have failed').toBeDefined();
  return { err: err as Error & { code: string; retryAfterS?: number }, info: sendFailureInfo(err)! };
}

const target = (name: string, url: string, extra: Partial<WebhookTarget> = {}): WebhookTarget => ({
  name,
  format: 'standard',
  url,
  secret: SECRET,
  ...extra,
});

describe('webhook provider: answers', () => {
  it('2xx is sent; the secret goes out as a signature, never in the recorded request', async () => {
    const p = provider([target('alerts', `http://127.0.0.1:${main.port}/hook`)]);
    const result = await send(p, request('alerts'));
    expect(result.receipt).toEqual({ providerStatus: '200', endpoint: { name: 'alerts' } });
    // One target and no fallback: its request is the recorded payload, so the attempt needs no digest of its own.
    expect(result.history).toEqual([expect.objectContaining({ attempt: 1, endpoint: 'alerts', outcome: 'sent' })]);
    expect(result.history[0]!.digest).toBeUndefined();
    expect(main.seen).toHaveLength(1);
    expect(main.seen[0]!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(main.seen[0]!.headers['webhook-signature']).not.toContain('redacted');
    expect(JSON.stringify(request('alerts'))).not.toContain(SECRET.slice(6));
  });

  it('410 is permanent: PROVIDER_REJECTED after one request', async () => {
    main.replies.push({ status: 410 });
    const { err } = await failure(send(provider([target('alerts', `http://127.0.0.1:${main.port}/`)]), request('alerts')));
    expect(err.code).toBe('PROVIDER_REJECTED');
    expect(err.message).toContain('target alerts is gone (HTTP 410)');
    expect(main.seen).toHaveLength(1);
  });

  it('429 and 5xx are retried honouring Retry-After, with the same webhook-id and a signature per attempt', async () => {
    main.replies.push({ status: 429, headers: { 'retry-after': '1' } }, { status: 503 }, { status: 204 });
    const started = Date.now();
    const result = await send(provider([target('alerts', `http://127.0.0.1:${main.port}/`)]), request('alerts'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(result.history.map((h) => h.outcome)).toEqual(['rate_limited', 'transient', 'sent']);
    expect(new Set(main.seen.map((s) => s.headers['webhook-id']))).toEqual(new Set(['ntf_1']));
  });

  it('gives up within the budget on a target that keeps answering 503: PROVIDER_UNAVAILABLE', async () => {
    main.replies.push(...Array.from({ length: 20 }, () => ({ status: 503 })));
    const { err } = await failure(send(provider([target('alerts', `http://127.0.0.1:${main.port}/`)]), request('alerts'), 1_000));
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
  });

  it('no answer once the request was written is DELIVERY_UNKNOWN, and it is not sent again', async () => {
    main.replies.push('hang');
    const p = provider([target('alerts', `http://127.0.0.1:${main.port}/`)], { timeoutMs: 300 });
    const { err, info } = await failure(send(p, request('alerts')));
    expect(err.code).toBe('DELIVERY_UNKNOWN');
    expect(info.history.map((h) => h.outcome)).toEqual(['unknown']);
    expect(main.seen).toHaveLength(1);
  });

  it('a refused connection sent nothing, and is retried (transient)', async () => {
    const closed = await receiver();
    await closed.close();
    const { err, info } = await failure(send(provider([target('alerts', `http://127.0.0.1:${closed.port}/`)]), request('alerts'), 800));
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
    expect(info.history[0]).toMatchObject({ outcome: 'transient', vendorCode: 'ECONNREFUSED' });
  });
});

describe('webhook provider: fallback', () => {
  const targets = () => [
    target('alerts', `http://127.0.0.1:${main.port}/primary`, { fallback: 'backup' }),
    target('backup', `http://127.0.0.1:${other.port}/backup`),
  ];

  it('is tried when the target answered a refusal or an error status', async () => {
    main.replies.push({ status: 500 });
    const result = await send(provider(targets()), request('alerts', request('backup')));
    expect(result.receipt.providerStatus).toBe('200');
    expect(main.seen).toHaveLength(1);
    expect(other.seen.map((s) => s.path)).toEqual(['/backup']);
  });

  it('each target tried is an attempt of its own, naming it, with the digest of its own request', async () => {
    main.replies.push({ status: 500 });
    const result = await send(provider(targets()), request('alerts', request('backup')));
    expect(result.history).toEqual([
      expect.objectContaining({ attempt: 1, endpoint: 'alerts', outcome: 'transient', vendorCode: 500 }),
      expect.objectContaining({ attempt: 2, endpoint: 'backup', outcome: 'sent' }),
    ]);
    // Each request as recorded without the fallback's: what a verifier recomputes from payload and payload.fallback.
    expect(result.history.map((h) => h.digest)).toEqual([digestOf(request('alerts')), digestOf(request('backup'))]);
    expect(result.receipt.endpoint).toEqual({ name: 'backup', digest: digestOf(request('backup')) });
  });

  it('a target that may have accepted is the one attempt, naming it', async () => {
    main.replies.push('hang');
    const { info } = await failure(send(provider(targets(), { timeoutMs: 300 }), request('alerts', request('backup'))));
    expect(info.history).toEqual([expect.objectContaining({ attempt: 1, endpoint: 'alerts', outcome: 'unknown' })]);
  });

  it('is not tried after a request that may have been accepted (no answer once written)', async () => {
    main.replies.push('hang');
    const { err } = await failure(send(provider(targets(), { timeoutMs: 300 }), request('alerts', request('backup'))));
    expect(err.code).toBe('DELIVERY_UNKNOWN');
    expect(other.seen).toHaveLength(0);
  });
});

describe('webhook provider: network rules', () => {
  it('follows no redirect: a 302 to loopback is PROVIDER_REJECTED and the loopback receiver gets nothing', async () => {
    main.replies.push({ status: 302, headers: { location: `http://127.0.0.1:${other.port}/inside` } });
    const { err } = await failure(send(provider([target('alerts', `http://127.0.0.1:${main.port}/`)]), request('alerts')));
    expect(err.code).toBe('PROVIDER_REJECTED');
    expect(err.message).toMatch(/answered HTTP 302, a redirect to .*redirects are not followed/);
    expect(other.seen).toHaveLength(0);
  });

  /** A resolver that answers `answers` in turn (the last one again once they run out), counting its calls. */
  function dns(...answers: string[][]): Resolve & { calls: number } {
    const resolve = ((_host, callback) => {
      const addresses = answers[Math.min(resolve.calls++, answers.length - 1)]!;
      callback(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
    }) as Resolve & { calls: number };
    resolve.calls = 0;
    return resolve;
  }

  it('refuses a name that resolves to 127.0.0.1: nothing reaches the receiver listening there', async () => {
    const p = provider([target('alerts', `http://hooks.example.test:${main.port}/`)], { privateHosts: [], resolve: dns(['127.0.0.1']) });
    const { err, info } = await failure(send(p, request('alerts')));
    expect(err.code).toBe('PROVIDER_REJECTED');
    expect(err.message).toContain('hooks.example.test resolved to 127.0.0.1, a loopback address');
    expect(err.message).toContain('NOTIFY_WEBHOOK_PRIVATE_HOSTS');
    expect(info.history).toEqual([expect.objectContaining({ outcome: 'rejected', vendorCode: 'blocked_address' })]);
    expect(main.seen).toHaveLength(0);
  });

  it('refuses a name that resolves to 10.x, and a name with any private address among its answers', async () => {
    for (const answer of [['10.1.2.3'], ['93.184.215.14', '192.168.1.1'], ['::ffff:10.0.0.1'], ['fe80::1']]) {
      const p = provider([target('alerts', `http://hooks.example.test:${main.port}/`)], { privateHosts: [], resolve: dns(answer) });
      const { err } = await failure(send(p, request('alerts')));
      expect(err.message, answer.join()).toMatch(/resolved to .*, a (private|link-local) address/);
    }
  });

  it('refuses a private IP literal without a lookup', async () => {
    const p = provider([target('alerts', `http://127.0.0.1:${main.port}/`)], { privateHosts: [] });
    const { err } = await failure(send(p, request('alerts')));
    expect(err.message).toContain('127.0.0.1 resolved to 127.0.0.1, a loopback address');
    expect(main.seen).toHaveLength(0);
  });

  it('lets a host on NOTIFY_WEBHOOK_PRIVATE_HOSTS reach its private address', async () => {
    const p = provider([target('alerts', `http://hooks.internal:${main.port}/`)], {
      privateHosts: ['hooks.internal'],
      resolve: dns(['127.0.0.1']),
    });
    await send(p, request('alerts'));
    expect(main.seen).toHaveLength(1);
  });

  it('connects to the address it checked: a DNS answer that turns private after the check never reaches the private address', async () => {
    // The first answer is public (TEST-NET-3, which leads nowhere), every later one loopback,
    // where the receiver listens. A check made by one lookup and a connect made by another
    // would reach the receiver; the socket's own lookup is the check, so nothing does.
    const resolve = dns(['203.0.113.7'], ['127.0.0.1']);
    const p = provider([target('alerts', `http://rebind.example.test:${main.port}/`)], { privateHosts: [], resolve, timeoutMs: 300 });
    const { err } = await failure(send(p, request('alerts'), 700));
    expect(main.seen).toHaveLength(0);
    // Each attempt's one lookup is its check; any later attempt is refused by the check itself.
    expect(['PROVIDER_REJECTED', 'PROVIDER_UNAVAILABLE', 'DELIVERY_UNKNOWN']).toContain(err.code);
  });
});
