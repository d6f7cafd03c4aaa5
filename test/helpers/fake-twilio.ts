/**
 * A small fake of Twilio's Messages endpoint on a free loopback port: 201 with a message SID
 * for any number, except the numbers marked opted out, which get Twilio's 400 with error
 * 21610 (the recipient replied STOP). Every request is counted. With `answerDelayMs` set, a
 * created message's SID is known (in `requests`) at once and answered that much later, as a
 * slow Twilio whose status callback beats its API answer.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './fakes.js';

export interface FakeTwilioRequest {
  path: string;
  authorization?: string;
  form: Record<string, string>;
  /** The SID of the message this request created, as soon as it arrived. */
  sid?: string;
}

export interface FakeTwilio {
  origin: string;
  requests: FakeTwilioRequest[];
  /** Numbers (E.164, as sent in `To`) answered with error 21610. */
  optedOut: Set<string>;
  /** Delays every 201 by this long (0: at once). */
  answerDelayMs: number;
  close(): Promise<void>;
}

export async function startFakeTwilio(optedOut: Iterable<string> = []): Promise<FakeTwilio> {
  const requests: FakeTwilioRequest[] = [];
  const stopped = new Set(optedOut);
  let seq = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const request: FakeTwilioRequest = { path: req.url ?? '', authorization: req.headers.authorization, form };
      requests.push(request);
      const reply = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (req.method !== 'POST' || !/^\/2010-04-01\/Accounts\/[^/]+\/Messages\.json$/.test(req.url ?? '')) {
        return reply(404, { code: 20404, message: 'The requested resource was not found', status: 404 });
      }
      if (form.To && stopped.has(form.To)) {
        return reply(400, {
          code: 21610,
          message: 'Attempt to send to unsubscribed recipient',
          more_info: 'https://www.twilio.com/docs/errors/21610',
          status: 400,
        });
      }
      seq++;
      request.sid = `SM${String(seq).padStart(32, '0')}`;
      const created = { sid: request.sid, status: 'queued', to: form.To, from: form.From, body: form.Body };
      if (fake.answerDelayMs > 0) setTimeout(() => reply(201, created), fake.answerDelayMs);
      else reply(201, created);
    });
  });
  const fake: FakeTwilio = { ...(await listenOnLoopback(server)), requests, optedOut: stopped, answerDelayMs: 0 };
  return fake;
}
