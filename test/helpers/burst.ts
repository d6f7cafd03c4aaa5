/**
 * Bursts of sends against slow peers (HTTP for Twilio and Slack, smtp-server for email) that
 * record, on one clock with the callers, when each request arrived, whether the client hung
 * up before the answer, and how many were open at once. `expectNothingAfterAnswer` checks
 * the rule "nothing reaches a provider after its call has answered" on such a record.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { NotifyError } from '../../src/core/errors.js';
import { listenOnLoopback } from './fakes.js';

/** One request as the peer saw it, by the key the test gave its message. */
export interface Arrival {
  key: string;
  arrivedAt: number;
  /** The client hung up before the peer answered. */
  abortedAt?: number;
  answeredAt?: number;
}

export interface SlowPeer {
  origin: string;
  arrivals: Arrival[];
  /** Most requests open at the same time. */
  maxOpen(): number;
  close(): Promise<void>;
}

function openCounter() {
  let open = 0;
  let max = 0;
  return {
    inc: () => {
      open++;
      max = Math.max(max, open);
    },
    dec: () => {
      open--;
    },
    max: () => max,
  };
}

/**
 * An HTTP peer that answers every request `delayMs` after it arrived, with `json`. `keyOf`
 * names a request from its form fields (the message text, the SMS body).
 */
export async function startSlowHttpPeer(opts: {
  delayMs: number;
  status: number;
  json: unknown;
  keyOf: (form: Record<string, string>) => string;
}): Promise<SlowPeer> {
  const arrivals: Arrival[] = [];
  const open = openCounter();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const arrival: Arrival = { key: '', arrivedAt: performance.now() };
    arrivals.push(arrival);
    open.inc();
    let timer: NodeJS.Timeout | undefined;
    res.on('close', () => {
      open.dec();
      if (!res.writableFinished) {
        clearTimeout(timer);
        arrival.abortedAt = performance.now();
      }
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      arrival.key = opts.keyOf(Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
      timer = setTimeout(() => {
        arrival.answeredAt = performance.now();
        res.writeHead(opts.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(opts.json));
      }, opts.delayMs);
    });
  });
  return { ...(await listenOnLoopback(server)), arrivals, maxOpen: open.max };
}

/**
 * An SMTP peer that answers each message's DATA `delayMs` after the message arrived. A
 * message's key is its first recipient; it arrives at RCPT TO.
 */
export async function startSlowSmtpPeer(delayMs: number): Promise<SlowPeer & { url: string }> {
  const arrivals: Arrival[] = [];
  const open = openCounter();
  /** The message each session is in the middle of. */
  const current = new Map<string, Arrival>();
  const server = new SMTPServer({
    secure: false,
    hideSTARTTLS: true,
    authOptional: true,
    logger: false,
    disableReverseLookup: true,
    onRcptTo(address, session, callback) {
      if (!current.has(session.id)) {
        const arrival: Arrival = { key: address.address, arrivedAt: performance.now() };
        arrivals.push(arrival);
        current.set(session.id, arrival);
        open.inc();
      }
      callback();
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        setTimeout(() => {
          const arrival = current.get(session.id);
          if (!arrival) return; // the client hung up meanwhile
          current.delete(session.id);
          open.dec();
          arrival.answeredAt = performance.now();
          callback(null, 'Ok');
        }, delayMs);
      });
    },
    onClose(session) {
      const arrival = current.get(session.id);
      if (!arrival) return;
      current.delete(session.id);
      open.dec();
      arrival.abortedAt = performance.now();
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    origin: `smtp://127.0.0.1:${port}`,
    url: `smtp://127.0.0.1:${port}`,
    arrivals,
    maxOpen: open.max,
    close: () =>
      new Promise<void>((resolve) => {
        for (const conn of (server as unknown as { connections: Set<{ close(): void }> }).connections ?? []) conn.close();
        server.close(() => resolve());
      }),
  };
}

/** How a call of the burst answered: `sent` or its error code, and when. */
export interface Answer {
  key: string;
  code: string;
  answeredAt: number;
}

/** Runs `send` for every key at once and records how and when each call answered. */
export async function burst(keys: string[], send: (key: string) => Promise<unknown>): Promise<Answer[]> {
  return Promise.all(
    keys.map(async (key) => {
      try {
        await send(key);
        return { key, code: 'sent', answeredAt: performance.now() };
      } catch (err) {
        return { key, code: err instanceof NotifyError ? err.code : `thrown: ${String(err)}`, answeredAt: performance.now() };
      }
    }),
  );
}

/** Codes that tell the caller nothing was sent. */
const NOTHING_SENT = new Set(['RATE_LIMITED', 'PROVIDER_UNAVAILABLE']);

/**
 * The rule and its parts: every arrival came before its call answered; a call answered
 * with a nothing-sent code never arrived; one answered DELIVERY_UNKNOWN arrived and was cut
 * off by the client before the peer answered; at most `limit` were open at once.
 */
export function expectNothingAfterAnswer(answers: Answer[], peer: SlowPeer, limit: number): void {
  const byKey = new Map(answers.map((a) => [a.key, a]));
  for (const arrival of peer.arrivals) {
    const answer = byKey.get(arrival.key);
    expect(answer, `arrival ${arrival.key} matches a call`).toBeDefined();
    expect(arrival.arrivedAt, `${arrival.key} reached the peer after its call answered ${answer!.code}`).toBeLessThanOrEqual(answer!.answeredAt);
  }
  for (const answer of answers) {
    const arrived = peer.arrivals.filter((a) => a.key === answer.key);
    if (NOTHING_SENT.has(answer.code)) expect(arrived, `${answer.key} answered ${answer.code} but reached the peer`).toEqual([]);
    if (answer.code === 'DELIVERY_UNKNOWN') {
      expect(arrived, `${answer.key} answered DELIVERY_UNKNOWN`).toHaveLength(1);
      expect(arrived[0]!.abortedAt, `${answer.key} was still open at the peer after its call answered DELIVERY_UNKNOWN`).toBeDefined();
      expect(arrived[0]!.answeredAt).toBeUndefined();
    }
    if (answer.code === 'sent') expect(arrived[0]?.answeredAt, `${answer.key} answered sent`).toBeDefined();
  }
  expect(peer.maxOpen(), 'requests open at the peer at once').toBeLessThanOrEqual(limit);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
