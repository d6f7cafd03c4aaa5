import type { FetchLike } from '@modelcontextprotocol/client';

/**
 * The most an upstream may send as one message: a JSON answer, or one event of an SSE
 * stream. The SDK bounds a stdio upstream's unread stdout to the same 10 MB.
 */
export const MAX_UPSTREAM_MESSAGE_BYTES = 10 * 1024 * 1024;

/** An HTTP upstream sent a message over the bound; the request fails, memory stays bounded. */
export class UpstreamMessageTooLargeError extends Error {
  override readonly name = 'UpstreamMessageTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`the upstream sent a message over ${maxBytes} bytes; it was not read further`);
  }
}

/** Statuses whose response has no body (`new Response` refuses one for them). */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

/** Errors the stream once more than `maxBytes` have passed. */
function totalBound(maxBytes: number, tooLarge: () => Error): TransformStream<Uint8Array, Uint8Array> {
  let count = 0;
  return new TransformStream({
    transform(chunk, controller) {
      count += chunk.byteLength;
      if (count > maxBytes) throw tooLarge();
      controller.enqueue(chunk);
    },
  });
}

/**
 * Errors the stream once one SSE event (the bytes between two blank lines, line breaks not
 * counted) passes `maxBytes`: a stream may run for hours, each event is bounded.
 */
function eventBound(maxBytes: number, tooLarge: () => Error): TransformStream<Uint8Array, Uint8Array> {
  let count = 0;
  let atLineStart = true;
  let previous = -1;
  return new TransformStream({
    transform(chunk, controller) {
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i]!;
        if (byte === 0x0a || byte === 0x0d) {
          if (!(byte === 0x0a && previous === 0x0d)) {
            if (atLineStart) count = 0; // a blank line ends the event
            atLineStart = true;
          }
        } else {
          atLineStart = false;
          if (++count > maxBytes) throw tooLarge();
        }
        previous = byte;
      }
      controller.enqueue(chunk);
    },
  });
}

export interface BoundedFetchOptions {
  maxBytes?: number;
  /**
   * Told when a body passes the bound. A JSON answer fails its request, but the SDK only
   * reports a broken event stream and leaves its request waiting: the caller ends it here.
   */
  onTooLarge?: (error: UpstreamMessageTooLargeError) => void;
  base?: FetchLike;
}

/**
 * `fetch` for an HTTP upstream's client transport, with every response body bounded as it
 * is read: a JSON answer in total, an event stream per event.
 */
export function boundedFetch(options: BoundedFetchOptions = {}): FetchLike {
  const maxBytes = options.maxBytes ?? MAX_UPSTREAM_MESSAGE_BYTES;
  const base = options.base ?? fetch;
  const tooLarge = (): Error => {
    const error = new UpstreamMessageTooLargeError(maxBytes);
    queueMicrotask(() => options.onTooLarge?.(error));
    return error;
  };
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body || NO_BODY.has(response.status) || (response.status >= 300 && response.status < 400)) return response;
    const sse = (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
    const bounded = new Response(response.body.pipeThrough(sse ? eventBound(maxBytes, tooLarge) : totalBound(maxBytes, tooLarge)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // The SDK reads the final URL to explain a redirect it did not follow.
    Object.defineProperty(bounded, 'url', { value: response.url });
    return bounded;
  };
}
