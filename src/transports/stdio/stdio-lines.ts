/**
 * The lines of stdin, screened and parsed once (stdio-wire.ts hands them to the SDK). The
 * SDK's own stdio transport closes itself, and so ends the process, on a line over its
 * buffer limit, and drops without a word a line that is not JSON, not a JSON-RPC message,
 * or a batch (an array, which MCP stopped accepting in 2025-06-18): the client then waits
 * for an answer that never comes. Here each of those is answered with a JSON-RPC error and
 * logged, and the connection keeps serving. Messages that pass go on as they parsed, but
 * for a tools/call whose `arguments` is not an object (see inbound.ts).
 */
import type { Logger } from '../../core/log.js';
import { parseMessage, refusal, screenMessage, type Refusal } from '../inbound.js';

/** How much of an oversized line is kept to find its request id in. */
const ID_PREFIX_BYTES = 512;

export interface LineScreenOptions {
  /** A line longer than this (bytes, newline excluded) is refused. */
  maxLineBytes: number;
  /** What grew the cap (an attachment setting), said in the refusal. */
  capWhy?: string | undefined;
  /** Writes one JSON-RPC message to the client (stdout). */
  reply(message: object): void;
  log: Logger;
  /** Takes each message that passes: a JSON-RPC message, screened (inbound.ts). */
  deliver(message: unknown): void;
}

export class LineScreen {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Set while the rest of an oversized line is being skipped: its first bytes. */
  private oversized: Buffer | undefined;
  private oversizedBytes = 0;

  constructor(private readonly options: LineScreenOptions) {}

  write(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      this.collect(chunk.subarray(start, end));
      if (nl === -1) break;
      this.endOfLine();
      start = nl + 1;
    }
  }

  /** End of input: a last line without a newline still counts. */
  end(): void {
    if (this.pendingBytes > 0 || this.oversized) this.endOfLine();
  }

  private collect(part: Buffer): void {
    if (part.length === 0) return;
    if (this.oversized) {
      this.oversizedBytes += part.length;
      return;
    }
    if (this.pendingBytes + part.length > this.options.maxLineBytes) {
      const head = Buffer.concat([...this.pending, part], this.pendingBytes + part.length);
      this.oversized = head.subarray(0, ID_PREFIX_BYTES);
      this.oversizedBytes = head.length;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(part);
    this.pendingBytes += part.length;
  }

  private endOfLine(): void {
    if (this.oversized) {
      const head = this.oversized;
      const bytes = this.oversizedBytes;
      this.oversized = undefined;
      this.oversizedBytes = 0;
      return this.refuse(refusal.tooLarge(head.toString('utf8'), bytes, this.options.maxLineBytes, this.options.capWhy));
    }
    let line = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    if (line.at(-1) === 0x0d) line = line.subarray(0, -1);
    if (line.every((b) => b === 0x20 || b === 0x09)) return;
    const read = parseMessage(line);
    if (read.refusal) return this.refuse(read.refusal);
    // The screen walks without recursion, so no nesting JSON.parse took can overflow it.
    const screened = screenMessage(read.value);
    if (screened.refusal) return this.refuse(screened.refusal);
    this.options.deliver(screened.message);
  }

  private refuse(r: Refusal): void {
    this.options.log.warn('stdio message refused', { code: r.error.code, reason: r.reason, ...(r.id === null ? {} : { id: r.id }) });
    this.options.reply({ jsonrpc: '2.0', id: r.id, error: r.error });
  }
}
