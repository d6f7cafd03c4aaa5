/**
 * The early reader: from the first moment of a stdio start, before the SDK, the store and
 * the tool catalog have loaded, it reads stdin and answers an opening `server/discover` and
 * `initialize` from the answers the build recorded from this very server
 * (scripts/early-answers.mjs). AI SDK 7 waits 1 s for `server/discover` and then falls back
 * to 2025-11-25, and a loaded machine takes longer than that to load the rest.
 *
 * It keeps every byte it read. The stdio wire, once serving, replays them to the SDK, which
 * answers everything as if nothing had come before (so its era choice and the handshake's
 * clientInfo are its own), and drops its answers to the requests already answered here,
 * after checking that they say the same (stdio-wire.ts). It imports nothing but node: it
 * runs before everything else loads, and its cost is part of cold start.
 */
import type { Readable, Writable } from 'node:stream';

/** The results the server gives, recorded at build time. */
export interface EarlyAnswers {
  /** The `server/discover` result, and the revisions it was recorded for (its supportedVersions). */
  discover: { versions: string[]; result: unknown };
  /** The `initialize` result for each protocol version the server echoes back. */
  initialize: Record<string, unknown>;
}

/** What the wire takes over: the bytes read so far, the ids answered (by their JSON), whether input ended. */
export interface EarlyInput {
  chunks: Buffer[];
  answered: Map<string, { method: string; result: string }>;
  ended: boolean;
}

/** A line longer than this is no opening request of a known client; the rest is left to the SDK. */
const MAX_LINE_BYTES = 16 * 1024;
/** The inbound screen's bounds, kept well inside: only a message it passes untouched is answered here. */
const MAX_STRING_CHARS = 200;
const MAX_MEMBERS = 200;
const MAX_DEPTH = 8;

const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';

type Obj = Record<string, unknown>;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Plain: short strings without lone surrogates, few members, shallow, no `__proto__` key.
 * Anything the inbound screen could refuse or rewrite fails this, and goes to the SDK.
 */
function plain(value: unknown, depth = 0, budget = { members: MAX_MEMBERS }): boolean {
  if (typeof value === 'string') return value.length <= MAX_STRING_CHARS && !LONE_SURROGATE.test(value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return true;
  if (depth >= MAX_DEPTH || typeof value !== 'object') return false;
  const entries = Array.isArray(value) ? value.map((v) => ['', v] as const) : Object.entries(value);
  budget.members -= entries.length;
  if (budget.members < 0) return false;
  for (const [key, v] of entries) {
    if (key === '__proto__' || key.length > MAX_STRING_CHARS || !plain(v, depth + 1, budget)) return false;
  }
  return true;
}

const isImplementation = (v: unknown) => isObject(v) && typeof v.name === 'string' && v.name.trim() !== '' && typeof v.version === 'string';

/** The recorded result for this line, or undefined when the SDK must judge it. */
export function earlyResult(
  answers: EarlyAnswers,
  message: unknown,
  state: { initialized: boolean },
): { method: string; result: unknown } | undefined {
  if (!isObject(message) || message.jsonrpc !== '2.0' || !plain(message)) return undefined;
  const { id, method, params } = message;
  if (!(typeof id === 'string' || Number.isSafeInteger(id)) || !isObject(params)) return undefined;
  const keys = Object.keys(message).sort().join();
  if (keys !== 'id,jsonrpc,method,params') return undefined;
  if (method === 'server/discover' && !state.initialized) {
    const meta = params._meta;
    if (!isObject(meta) || Object.keys(params).length !== 1) return undefined;
    const version = meta[PROTOCOL_VERSION_KEY];
    if (typeof version !== 'string' || !answers.discover.versions.includes(version)) return undefined;
    if (!isObject(meta[CLIENT_CAPABILITIES_KEY])) return undefined;
    if (CLIENT_INFO_KEY in meta && !isImplementation(meta[CLIENT_INFO_KEY])) return undefined;
    return { method, result: answers.discover.result };
  }
  if (method === 'initialize' && !state.initialized) {
    const version = params.protocolVersion;
    if (typeof version !== 'string' || !Object.hasOwn(answers.initialize, version)) return undefined;
    if (!isObject(params.capabilities) || !isImplementation(params.clientInfo)) return undefined;
    if (Object.keys(params).some((k) => !['protocolVersion', 'capabilities', 'clientInfo', '_meta'].includes(k))) return undefined;
    if ('_meta' in params && (!isObject(params._meta) || PROTOCOL_VERSION_KEY in params._meta)) return undefined;
    state.initialized = true;
    return { method, result: answers.initialize[version] };
  }
  return undefined;
}

export class EarlyReader {
  private readonly chunks: Buffer[] = [];
  private readonly answered = new Map<string, { method: string; result: string }>();
  private line: Buffer[] = [];
  private lineBytes = 0;
  /** Answering stops at the first line it does not answer: answers stay in the order the SDK would give. */
  private answering = true;
  private ended = false;
  private readonly state = { initialized: false };

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    private readonly answers: EarlyAnswers,
  ) {
    stdin.on('data', this.onData);
    stdin.once('end', this.onEnd);
  }

  /** Stops reading and hands over everything read so far; the caller attaches its own reader in the same turn. */
  handOver(): EarlyInput {
    this.stdin.off('data', this.onData);
    this.stdin.off('end', this.onEnd);
    return { chunks: this.chunks, answered: this.answered, ended: this.ended };
  }

  private readonly onEnd = () => {
    this.ended = true;
  };

  private readonly onData = (data: Buffer | string) => {
    const chunk = typeof data === 'string' ? Buffer.from(data) : data;
    this.chunks.push(chunk);
    let start = 0;
    while (this.answering && start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const part = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      this.lineBytes += part.length;
      if (this.lineBytes > MAX_LINE_BYTES) return void (this.answering = false);
      this.line.push(part);
      if (nl === -1) return;
      this.endOfLine();
      start = nl + 1;
    }
  };

  private endOfLine(): void {
    const text = Buffer.concat(this.line, this.lineBytes).toString('utf8').trim();
    this.line = [];
    this.lineBytes = 0;
    if (text === '') return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return void (this.answering = false);
    }
    const early = earlyResult(this.answers, message, this.state);
    if (!early) return void (this.answering = false);
    const id = (message as { id: string | number }).id;
    const key = JSON.stringify(id);
    if (this.answered.has(key)) return void (this.answering = false);
    const result = JSON.stringify(early.result);
    this.answered.set(key, { method: early.method, result });
    // The SDK's own key order, so the bytes match its answer.
    this.stdout.write(`{"result":${result},"jsonrpc":"2.0","id":${key}}\n`);
  }
}

let current: { reader: EarlyReader; stdin: Readable } | undefined;

/** Starts the early reader on these streams (the CLI's stdio start, first thing). */
export function startEarlyReader(stdin: Readable, stdout: Writable, answers: EarlyAnswers): void {
  current = { reader: new EarlyReader(stdin, stdout, answers), stdin };
}

/**
 * The early reader running on this input, if any, for the wire to take over when it starts
 * reading (it keeps reading until then: a turn without a reader would lose data).
 */
export function earlyReaderOn(stdin: Readable): EarlyReader | undefined {
  if (current?.stdin !== stdin) return undefined;
  const { reader } = current;
  current = undefined;
  return reader;
}

/** A command that ends without serving stdio (a store that cannot open): stop reading, so the process can exit. */
export function releaseEarlyReader(stdin: Readable): void {
  const reader = earlyReaderOn(stdin);
  if (reader === undefined) return;
  reader.handOver();
  stdin.pause();
}
