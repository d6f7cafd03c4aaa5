/**
 * Bursts of sends against slow HTTP peers (Twilio and Slack; email's gated SMTP peer lives in
 * test/providers/smtp.test.ts) that record, on one clock with the callers, when each request
 * arrived, whether the client hung up before the answer, and how many were open at once.
 * `expectNothingAfterAnswer` checks the rule "nothing reaches a provider after its call has
 * answered" on such a record.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
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
    expect(arrival.arrivedAt, `${arrival.key} reached the peer after its call answered ${answer!.code}`).toBeLessThanOrEqual(
      answer!.answeredAt,
    );
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
