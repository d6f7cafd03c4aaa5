/**
 * A Server-Sent Events reader over node:http for tests: parses events as the EventSource
 * spec does (event, id, data, retry; `:` comments kept apart), and waits for the next ones.
 */
import { request, type IncomingMessage } from 'node:http';

export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

export class SseReader {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  retry?: number;
  ended = false;
  private buffer = '';
  private waiters: (() => void)[] = [];

  constructor(readonly response: IncomingMessage) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end: number;
      while ((end = this.buffer.indexOf('\n\n')) >= 0) {
        this.block(this.buffer.slice(0, end));
        this.buffer = this.buffer.slice(end + 2);
      }
      this.wake();
    });
    const finish = () => {
      this.ended = true;
      this.wake();
    };
    response.on('end', finish);
    response.on('close', finish);
    response.on('error', finish);
  }

  get status(): number {
    return this.response.statusCode ?? 0;
  }

  /** The data of every event so far, parsed. */
  data<T = any>(event?: string): T[] {
    return this.events.filter((e) => event === undefined || e.event === event).map((e) => JSON.parse(e.data) as T);
  }

  /** Resolves when `predicate` holds over what arrived, or rejects after `timeoutMs`. */
  async until(predicate: (reader: this) => boolean, timeoutMs = 2_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`SSE: no ${what} within ${timeoutMs} ms; got ${JSON.stringify(this.events)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The n-th event (0-based), waiting for it. */
  async nth(n: number, timeoutMs = 2_000): Promise<SseEvent> {
    await this.until((r) => r.events.length > n, timeoutMs, `event #${n}`);
    return this.events[n]!;
  }

  close(): void {
    this.response.destroy();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private block(text: string): void {
    const event: SseEvent = { event: 'message', data: '' };
    const data: string[] = [];
    let fields = 0;
    for (const line of text.split('\n')) {
      if (line.startsWith(':')) {
        this.comments.push(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      fields++;
      if (field === 'event') event.event = value;
      else if (field === 'id') event.id = value;
      else if (field === 'data') data.push(value);
      else if (field === 'retry') this.retry = Number(value);
    }
    if (data.length > 0) this.events.push({ ...event, data: data.join('\n') });
    else if (fields > 0 && event.id !== undefined) this.events.push(event);
  }
}

/** GETs `url` and resolves with a reader once the response head arrives. */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => resolve(new SseReader(res)));
    req.on('error', reject);
    req.end();
  });
}
