/**
 * The stdio connection as the SDK's serveStdio takes it (its `transport` option): the lines
 * of stdin are screened (stdio-lines.ts) and handed on as the messages they parsed to, and
 * each answer is written as one JSON line: each line is parsed once, where the SDK's
 * StdioServerTransport behind a screening stream would parse and validate it again.
 * End of input is left to the owner, who answers the calls still running first (stdio.ts).
 */
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import type { Logger } from '../../core/log.js';
import type { EarlyInput, EarlyReader } from './early-reader.js';
import { LineScreen } from './stdio-lines.js';

export interface StdioWireOptions {
  /** A longer line (bytes, newline excluded) is refused. */
  maxLineBytes: number;
  /** What grew the cap, said when it refuses. */
  capWhy?: string | undefined;
  log: Logger;
  /** Sees each message that passes, before the SDK does; a value it returns is sent as the answer instead. */
  onMessage?(message: unknown): unknown;
  /** Sees each message the SDK sends, before it is written. */
  onSend?(message: JSONRPCMessage): void;
  /** The early reader on this input: what it read is replayed at start, and the answers it gave are not sent twice. */
  early?: EarlyReader;
}

export class StdioWire implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly screen: LineScreen;
  private readonly onSend: ((message: JSONRPCMessage) => void) | undefined;
  private readonly log: Logger;
  private early: EarlyReader | undefined;
  /** Requests the early reader answered, by their id's JSON: the SDK's answer to each is checked and dropped. */
  private answered: EarlyInput['answered'] = new Map();
  private inputEnds: (() => void) | undefined;
  private started = false;
  private closed = false;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    options: StdioWireOptions,
  ) {
    this.onSend = options.onSend;
    this.log = options.log;
    this.early = options.early;
    this.screen = new LineScreen({
      maxLineBytes: options.maxLineBytes,
      capWhy: options.capWhy,
      log: options.log,
      reply: (message) => void this.write(message).catch(() => {}),
      deliver: (message) => {
        // A throw here would escape stdin's data handler and end the process.
        try {
          const answer = options.onMessage?.(message);
          if (answer !== undefined) return void this.write(answer as object).catch(() => {});
          // Screened: a JSON-RPC request, notification or response (inbound.ts).
          this.onmessage?.(message as JSONRPCMessage);
        } catch (err) {
          this.onerror?.(err instanceof Error ? err : new Error(String(err)));
        }
      },
    });
  }

  async start(): Promise<void> {
    this.started = true;
    // In one turn: the early reader stops, its bytes are replayed, and this reader takes over.
    const early = this.early?.handOver();
    this.early = undefined;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onInputError);
    // Stays attached after close: a late write error (the client gone) is dropped, not thrown.
    this.stdout.on('error', this.onOutputError);
    if (early) {
      this.answered = early.answered;
      for (const chunk of early.chunks) this.onData(chunk);
    }
    if (this.inputEnds) this.watchEnd(this.inputEnds, early?.ended ?? false);
  }

  /** Calls `fn` once input has ended, counting an end the early reader saw. */
  whenInputEnds(fn: () => void): void {
    if (this.early === undefined && !this.started) return void this.stdin.once('end', fn);
    if (this.started) return this.watchEnd(fn, false);
    this.inputEnds = fn;
  }

  private watchEnd(fn: () => void, ended: boolean): void {
    if (ended || this.stdin.readableEnded) fn();
    else this.stdin.once('end', fn);
  }

  /** The client closed its side: a last line without a newline is still read. */
  endOfInput(): void {
    this.screen.end();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the stdio connection is closed'));
    this.onSend?.(message);
    if (this.answered.size > 0 && this.alreadyAnswered(message)) return Promise.resolve();
    return this.write(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onInputError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.onclose?.();
  }

  /** The SDK's answer to a request the early reader answered: dropped, and a different one logged. */
  private alreadyAnswered(message: JSONRPCMessage): boolean {
    if (!('id' in message) || message.id === undefined) return false;
    const key = JSON.stringify(message.id);
    const early = this.answered.get(key);
    if (early === undefined || !('result' in message || 'error' in message)) return false;
    this.answered.delete(key);
    if (!('result' in message) || JSON.stringify(message.result) !== early.result) {
      this.log.warn('early answer differed from the server', { method: early.method, id: message.id });
    }
    return true;
  }

  private write(message: object): Promise<void> {
    if (this.stdout.write(`${JSON.stringify(message)}\n`)) return Promise.resolve();
    // Rejects if the stream fails first.
    return once(this.stdout, 'drain').then(() => {});
  }

  private readonly onData = (chunk: Buffer | string) => {
    if (!this.closed) this.screen.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  };

  private readonly onInputError = (error: Error) => this.onerror?.(error);

  private readonly onOutputError = (error: Error) => {
    if (this.closed) return;
    this.onerror?.(error);
    void this.close();
  };
}
