/**
 * A scriptable HTTP peer on a free loopback port, for what Prism cannot answer: Slack's
 * `ok: false` bodies, 429 with Retry-After, Twilio error codes, and hangs.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The body as sent; `form` holds it parsed when it is form-encoded. */
  body: string;
  form: Record<string, string>;
}

export type FakeReply =
  | { status: number; headers?: Record<string, string>; json?: unknown }
  /** Read the request, then never answer. */
  | 'hang';

export interface FakePeer {
  origin: string;
  requests: FakeRequest[];
  /** Replies for the next requests, in order; when empty, `fallback` answers. */
  replies: FakeReply[];
  close(): Promise<void>;
}

export async function startFakePeer(fallback: FakeReply = { status: 404, json: { error: 'no reply scripted' } }): Promise<FakePeer> {
  const requests: FakeRequest[] = [];
  const replies: FakeReply[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const form = (req.headers['content-type'] ?? '').includes('x-www-form-urlencoded')
        ? Object.fromEntries(new URLSearchParams(body))
        : {};
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, form });
      const reply = replies.shift() ?? fallback;
      if (reply === 'hang') return;
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.json === undefined ? '' : JSON.stringify(reply.json));
    });
  });
  return { ...(await listenOnLoopback(server)), requests, replies };
}

export interface RecordingProxy {
  origin: string;
  /** Every request as it passed on to the peer, with the status the peer answered it. */
  requests: Array<FakeRequest & { status: number }>;
  close(): Promise<void>;
}

/**
 * A loopback proxy in front of `target` (Prism): forwards each request as it came and the
 * answer as it went, and records both, so a test can assert what reached a peer that keeps
 * no log of its own.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const requests: RecordingProxy['requests'] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const form = (req.headers['content-type'] ?? '').includes('x-www-form-urlencoded')
        ? Object.fromEntries(new URLSearchParams(body))
        : {};
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(
          (e): e is [string, string] => typeof e[1] === 'string' && !['host', 'connection', 'content-length'].includes(e[0]),
        ),
      );
      try {
        const answer = await fetch(`${target}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(body ? { body } : {}) });
        const text = await answer.text();
        requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, form, status: answer.status });
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(text);
      } catch (err) {
        requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, form, status: 502 });
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: false, error: `proxy: ${String(err)}` }));
      }
    });
  });
  return { ...(await listenOnLoopback(server)), requests };
}

/** Listens on a free loopback port; close() also ends open keep-alive sockets. */
export async function listenOnLoopback(server: Server): Promise<{ origin: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
