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
 * The Slack fake also answers chat.delete (a retract that came after the release) and
 * chat.update (an edit of a post that left), and counts them by the token of the post they
 * change, apart from deliveries. Each delivery also records the version marker its text
 * carries (`soakv<n>`: which edit of the message left).
 *
 * An escalation step's text starts `Escalates ntf_…:` and carries its first send's text
 * (token included), so it is counted apart, by the first send's id (`steps`): one fake is one
 * channel, and a soak policy names each channel once, so (fake, id) is one step. The answer
 * links a delivery carries (`/answer/<token>`) are kept by soak token or by first send id,
 * for the load to answer with (load.mjs).
 */
import { createServer } from 'node:http';
import { SMTPServer } from 'smtp-server';

const TOKEN_RE = /\bsk[0-9a-z]+x[0-9a-z]+\b/;
/**
 * Which version of a message left: a send's text carries `soakv0`, each edit's `soakv<n>`
 * (n counting the edits of that send), so a delivery says which text reached the provider.
 */
const VERSION_RE = /\bsoakv(\d+)\b/;
/** A step's text: `Escalates <first send's id>: <its text>` (src/notification/escalate.ts). */
const STEP_RE = /\bEscalates (ntf_[0-9a-f]+):/;
const LINK_RE = /\/answer\/([A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/g;

/** The answer tokens in a text, each once. */
export function answerTokensIn(text) {
  return [...new Set([...(text ?? '').matchAll(LINK_RE)].map((m) => m[1]))];
}

/** A raw MIME message's text, quoted-printable and base64 parts decoded (where a version marker or a link may be). */
export function mimeText(raw) {
  const plain = raw.replace(/=\r?\n/g, '');
  const qp = plain.replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(Number.parseInt(h, 16)));
  const b64 = (raw.match(/(?:^[A-Za-z0-9+/=]{16,}\r?\n)+/gm) ?? []).map((block) => Buffer.from(block.replace(/\s+/g, ''), 'base64').toString('utf8'));
  return [plain, qp, ...b64].join('\n');
}

export function versionIn(text) {
  const m = VERSION_RE.exec(text ?? '');
  return m ? Number(m[1]) : -1;
}

/** The version marker in a raw MIME message: in any part, quoted-printable or base64. */
export function versionInMime(raw) {
  return versionIn(mimeText(raw));
}

/** Deliveries by token, plus counts of every request seen and faults served. */
function ledger(name) {
  return {
    name,
    /** The channel it stands for (an escalation step's `via`). */
    channel: { smtp: 'email', twilio: 'sms', slack: 'slack' }[name],
    requests: 0,
    delivered: new Map(),
    /** token -> the version marker of each delivery (-1: none), in order. */
    versions: new Map(),
    faults: {},
    /** Requests whose text carries no soak token (must be 0: every soak send has one). */
    untokened: 0,
    mode: 'ok',
    rate: 0,
    /** First send id -> deliveries of its escalation step on this channel. */
    steps: new Map(),
    /** Soak token (a first send) or first send id (its steps) -> the answer tokens delivered. */
    links: new Map(),
    /**
     * A delivery: a step's (by `head`, its first line or subject) counted by its first send's
     * id, any other by the soak token in it; `body` is where its answer links are.
     */
    receive(head, version, body = head) {
      const root = STEP_RE.exec(head ?? '')?.[1];
      const key = root ?? TOKEN_RE.exec(head ?? '')?.[0];
      if (root) this.steps.set(root, (this.steps.get(root) ?? 0) + 1);
      else this.deliver(key, version);
      const tokens = key ? answerTokensIn(body) : [];
      for (const t of tokens) (this.links.get(key) ?? this.links.set(key, new Set()).get(key)).add(t);
    },
    deliver(token, version = -1) {
      if (!token) {
        this.untokened++;
        return;
      }
      this.delivered.set(token, (this.delivered.get(token) ?? 0) + 1);
      (this.versions.get(token) ?? this.versions.set(token, []).get(token)).push(version);
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

/**
 * An HTTP provider fake: `text(req, body)` returns the text that carries the token, `ok(seq)`
 * the success JSON, `idOf(answer)` the message id it gave; `amend(req, body)` recognises a
 * request that takes a message back ({ id, answer }), undefined for a send.
 */
async function httpFake(name, { okStatus, ok, text, idOf, amend }) {
  const book = Object.assign(ledger(name), { sentIds: new Map(), retracted: new Map(), retractedUnknown: 0, updated: new Map(), updatedUnknown: 0 });
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
      // A retract of a post (Slack chat.delete) is no delivery: it is counted by the token its message carried.
      const removed = amend?.(req, body);
      if (removed !== undefined) {
        if (req.socket.destroyed) return;
        const token = book.sentIds.get(removed.id);
        if (removed.update) {
          // chat.update of a post that left (edit_notification): counted apart, with the version it now shows.
          if (token) (book.updated.get(token) ?? book.updated.set(token, []).get(token)).push(removed.version);
          else book.updatedUnknown++;
        } else if (token) book.retracted.set(token, (book.retracted.get(token) ?? 0) + 1);
        else book.retractedUnknown++;
        res.writeHead(okStatus, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(removed.answer));
      }
      const t = text(req, body);
      // Only a success that can still reach the server counts as delivered.
      if (req.socket.destroyed) return;
      book.receive(t, versionIn(t));
      book.lastText = t;
      const answer = ok(++seq);
      const token = STEP_RE.test(t ?? '') ? undefined : TOKEN_RE.exec(t ?? '')?.[0];
      if (token && idOf) book.sentIds.set(idOf(answer), token);
      res.writeHead(okStatus, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
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
    idOf: (answer) => answer.ts,
    // retract_notification of a Slack post that left (a retract that lost the race to the release).
    // edit_notification of a post that left: chat.update, with the version its new text carries.
    amend: (req, body) => {
      const url = req.url ?? '';
      if (url.includes('chat.update')) {
        const args = formOrJson(req, body);
        return { id: args.ts, update: true, version: versionIn(args.text), answer: { ok: true, channel: 'C0SOAK001', ts: args.ts, text: args.text } };
      }
      if (!url.includes('chat.delete')) return undefined;
      const ts = formOrJson(req, body).ts;
      return { id: ts, answer: { ok: true, channel: 'C0SOAK001', ts } };
    },
    text: (req, body) => formOrJson(req, body).text,
  });
}

/** A Slack Web API request's arguments, sent as JSON or as a form. */
function formOrJson(req, body) {
  if ((req.headers['content-type'] ?? '').includes('json')) {
    try {
      return JSON.parse(body);
    } catch {
      return {};
    }
  }
  return Object.fromEntries(new URLSearchParams(body));
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
        // Unfolded: a long subject (a step's) continues on the next line.
        const subject = /^Subject: (.*)$/m.exec(raw.replace(/\r?\n[ \t]+/g, ' '))?.[1];
        const text = mimeText(raw);
        book.receive(subject, versionIn(text), text);
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
