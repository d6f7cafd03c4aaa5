/**
 * node:http to the SDK's web-standard face and back. The body has already been read (with
 * our byte bound) and parsed, so the Request carries headers only and the parsed body goes
 * beside it; the Response, JSON or an SSE stream, is piped out with backpressure, and a
 * client that goes away cancels it and aborts the Request's signal (under 2026-07-28,
 * closing the response stream is how a client cancels a call).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

/** The Request for a node request whose Host header has been checked already. */
export function toWebRequest(req: IncomingMessage, res: ServerResponse, overrides: Record<string, string> = {}): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    // The body travels parsed, beside the Request.
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding') continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  for (const [name, value] of Object.entries(overrides)) headers.set(name, value);
  const aborted = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) aborted.abort();
  });
  return new Request(new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`), {
    method: req.method,
    headers,
    signal: aborted.signal,
  });
}

export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: OutgoingHttpHeaders = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, response.statusText, headers);
  if (!response.body) return void res.end();
  // An SSE stream may stay quiet for a while: the client needs the status line now.
  res.flushHeaders();
  // A client that goes away ends the pipeline, which cancels the SDK's stream.
  await pipeline(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>), res).catch(() => {});
}
