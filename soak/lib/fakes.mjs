/**
 * Loopback provider fakes for the soak: smtp-server for email, small HTTP peers for Twilio
 * and Slack. Each counts what it DELIVERED (answered with success on a still-open socket),
 * by the soak token the harness put in the message, and switches fault modes on command:
 *
 *   ok     answer success
 *   5xx    503 with Retry-After: 1 (SMTP: 451)
 *   421    SMTP only: 421 at DATA (service not available)
 *   hang   read the request, never answer
 *   reset  read the request, then destroy the socket without answering
 *
 * A mode applies to a share of requests (`rate`), so traffic keeps flowing during a fault.
 */
import { createServer } from 'node:http';
import { SMTPServer } from 'smtp-server';

const TOKEN_RE = /\bsk[0-9a-z]+x[0-9a-z]+\b/;

/** Deliveries by token, plus counts of every request seen and faults served. */
function ledger(name) {
  return {
    name,
    requests: 0,
    delivered: new Map(),
    faults: {},
    /** Requests whose text carries no soak token (must be 0: every soak send has one). */
    untokened: 0,
    mode: 'ok',
    rate: 0,
    deliver(token) {
      if (!token) {
        this.untokened++;
        return;
      }
      this.delivered.set(token, (this.delivered.get(token) ?? 0) + 1);
    },
    /** The fault to serve this request, or 'ok'. */
    pick() {
      this.requests++;
      if (this.mode === 'ok' || Math.random() >= this.rate) return 'ok';
      this.faults[this.mode] = (this.faults[this.mode] ?? 0) + 1;
      return this.mode;
    },
    setMode(mode, rate = 0.5) {
      this.mode = mode;
      this.rate = rate;
    },
  };
}

function listen(server) {
  const sockets = new Set();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        origin: `http://127.0.0.1:${server.address().port}`,
        close: () =>
          new Promise((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      }),
    ),
  );
}

/** An HTTP provider fake: `extract(req, body)` returns the text that carries the token, `ok(seq)` the success JSON. */
async function httpFake(name, { okStatus, ok, text }) {
  const book = ledger(name);
  let seq = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const fault = book.pick();
      if (fault === 'hang') return;
      if (fault === 'reset') return req.socket.destroy();
      if (fault === '5xx') {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
        return res.end('{"error":"service_unavailable"}');
      }
      const t = text(req, body);
      // Only a success that can still reach the server counts as delivered.
      if (req.socket.destroyed) return;
      book.deliver(TOKEN_RE.exec(t ?? '')?.[0]);
      book.lastText = t;
      res.writeHead(okStatus, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ok(++seq)));
    });
  });
  const handle = await listen(server);
  return Object.assign(book, handle);
}

export function startTwilio() {
  return httpFake('twilio', {
    okStatus: 201,
    ok: (n) => ({ sid: `SM${String(n).padStart(32, '0')}`, status: 'queued' }),
    text: (_req, body) => new URLSearchParams(body).get('Body'),
  });
}

export function startSlack() {
  return httpFake('slack', {
    okStatus: 200,
    ok: (n) => ({ ok: true, channel: 'C0SOAK001', ts: `1712345678.${String(n).padStart(6, '0')}` }),
    text: (req, body) => {
      if ((req.headers['content-type'] ?? '').includes('json')) {
        try {
          return JSON.parse(body).text;
        } catch {
          return undefined;
        }
      }
      return new URLSearchParams(body).get('text');
    },
  });
}

export const SMTP_USER = 'soak';
export const SMTP_PASS = 'soak-pass';

export async function startSmtp() {
  const book = ledger('smtp');
  const server = new SMTPServer({
    secure: false,
    hideSTARTTLS: true,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    disableReverseLookup: true,
    size: 0,
    onAuth(auth, _s, cb) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASS) return cb(null, { user: auth.username });
      cb(Object.assign(new Error('bad auth'), { responseCode: 535 }));
    },
    onData(stream, _session, cb) {
      const chunks = [];
      stream.on('data', (c) => chunks.push(c));
      stream.on('end', () => {
        const fault = book.pick();
        if (fault === 'hang') return;
        if (fault === '421' || fault === 'reset') return cb(Object.assign(new Error('Service not available, closing channel'), { responseCode: 421 }));
        if (fault === '5xx') return cb(Object.assign(new Error('Try again later'), { responseCode: 451 }));
        const raw = Buffer.concat(chunks).toString('utf8');
        const subject = /^Subject: (.*)$/m.exec(raw)?.[1];
        book.deliver(TOKEN_RE.exec(subject ?? '')?.[0]);
        cb(null, 'Ok');
      });
    },
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  server.on('error', () => {});
  const port = server.server.address().port;
  return Object.assign(book, {
    url: `smtp://${SMTP_USER}:${SMTP_PASS}@127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        for (const conn of server.connections ?? []) conn.close();
        server.close(() => resolve());
      }),
  });
}
