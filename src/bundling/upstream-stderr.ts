import { StringDecoder } from 'node:string_decoder';

/**
 * An upstream's stderr, as lines of the gateway's own JSON log. A line that is a JSON object
 * (an upstream that logs JSON lines, as notify-mcp does) passes through as that object with
 * `upstream` set to the server id, so a log reader filters on its fields as it would on the
 * upstream's own log; any other line becomes `{ time, level: "info", msg: line, upstream }`.
 */

/** Longer lines are cut (and never parsed): a runaway upstream cannot flood one log line. */
export const MAX_STDERR_LINE = 16_000;

export function upstreamStderrLine(line: string, upstream: string, now: Date = new Date(), truncated = false): string {
  const cut = truncated || line.length > MAX_STDERR_LINE;
  if (!cut && line.trimStart().startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(line);
      // The id is ours to set: an upstream's own `upstream` field is overwritten, never trusted.
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return JSON.stringify({ ...parsed, upstream }) + '\n';
    } catch {
      // not JSON after all: wrapped below
    }
  }
  const msg = line.length > MAX_STDERR_LINE ? cutAt(line, MAX_STDERR_LINE) : line;
  return JSON.stringify({ time: now.toISOString(), level: 'info', msg, upstream, ...(cut ? { truncated: true } : {}) }) + '\n';
}

/** The first `max` UTF-16 units, one fewer when the cut would split a surrogate pair. */
function cutAt(text: string, max: number): string {
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * Splits a byte stream into lines of at most `maxChars` characters while reading, so what it
 * holds is bounded whatever the stream sends: a line that reaches the bound is handed on at
 * once, marked truncated, and the rest of it (up to its newline) is dropped unread. A
 * trailing `\r` is removed; the last line without a newline is handed on at `end()`.
 */
export class BoundedLineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private parts: string[] = [];
  private length = 0;
  /** The current line was handed on already; drop until its newline. */
  private dropping = false;

  constructor(
    private readonly maxChars: number,
    private readonly onLine: (line: string, truncated: boolean) => void,
  ) {}

  /** Characters held for the line in progress (at most `maxChars`). */
  get buffered(): number {
    return this.length;
  }

  push(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let start = 0;
    while (start < text.length) {
      const nl = text.indexOf('\n', start);
      const end = nl === -1 ? text.length : nl;
      if (!this.dropping) this.take(text, start, end);
      if (nl === -1) return;
      if (this.dropping) this.dropping = false;
      else this.flush(false);
      start = nl + 1;
    }
  }

  end(): void {
    const rest = this.decoder.end();
    if (rest) this.push(rest);
    if (!this.dropping && this.length > 0) this.flush(false);
    this.dropping = false;
  }

  private take(text: string, start: number, end: number): void {
    const room = this.maxChars - this.length;
    if (end - start <= room) {
      if (end > start) this.parts.push(text.slice(start, end));
      this.length += end - start;
      return;
    }
    this.parts.push(text.slice(start, start + room));
    this.length = this.maxChars;
    this.flush(true);
    this.dropping = true;
  }

  private flush(truncated: boolean): void {
    let line = this.parts.join('');
    this.parts = [];
    this.length = 0;
    if (!truncated && line.endsWith('\r')) line = line.slice(0, -1);
    this.onLine(truncated ? cutAt(line, line.length) : line, truncated);
  }
}
