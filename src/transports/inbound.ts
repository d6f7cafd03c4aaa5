/**
 * The screen every incoming JSON-RPC message passes before the SDK sees it, on stdio and HTTP
 * alike: batches, non-messages, overlong names and ids, and over-wide objects are refused with
 * an answer that says why; odd tool arguments are set aside for the tool to refuse with a
 * coded result. What each rule guards against: docs/architecture.md, "The inbound screen".
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type RequestId,
} from '@modelcontextprotocol/server';
import { ARGUMENTS_KEY } from '../mcp/call-arguments.js';
import { loneSurrogateAt } from '@notify-mcp/union';

const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';

export interface Refusal {
  /** The request's id when it could be read, else null (JSON-RPC's rule). */
  id: RequestId | null;
  error: { code: number; message: string };
  /** A word for the logs. */
  reason: 'batch' | 'invalid' | 'parse' | 'too_large' | 'too_long' | 'too_wide';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function idOf(value: unknown): RequestId | null {
  const id = isObject(value) ? value.id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

export const refusal = {
  batch: (): Refusal => ({
    id: null,
    reason: 'batch',
    error: {
      code: -32600,
      message: 'Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 and later); send each message on its own',
    },
  }),
  invalid: (value: unknown): Refusal => ({
    id: idOf(value),
    reason: 'invalid',
    error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 request, notification or response' },
  }),
  /** A message holding more object members than MAX_OBJECT_MEMBERS. */
  tooWide: (value: unknown): Refusal => ({
    id: idOf(value),
    reason: 'too_wide',
    error: {
      code: -32600,
      message: `Invalid Request: the message holds more than ${MAX_OBJECT_MEMBERS} object members (keys, counted at every depth); send at most ${MAX_OBJECT_MEMBERS}`,
    },
  }),
  /** An identifier the SDK would echo (method, name, uri) over its bound. */
  tooLong: (value: unknown, field: string, length: number, limit: number, example: string): Refusal => ({
    id: idOf(value),
    reason: 'too_long',
    error: {
      code: -32602,
      message: `Invalid params: ${field} is ${length} characters, over the limit of ${limit}; send a name this server lists, e.g. ${example}`,
    },
  }),
  /** A client name holding a lone surrogate, at `index`. */
  notWellFormed: (value: unknown, field: string, index: number): Refusal => ({
    id: idOf(value),
    reason: 'invalid',
    error: { code: -32602, message: `Invalid params: ${field} holds a lone surrogate at character ${index}; send well-formed Unicode` },
  }),
  /** A string id over MAX_ID_CHARS: answered with id null, since the answer would echo it whole. */
  longId: (length: number): Refusal => ({
    id: null,
    reason: 'too_long',
    error: {
      code: -32600,
      message: `Invalid Request: id is ${length} characters, over the limit of ${MAX_ID_CHARS}; use a number or a short string`,
    },
  }),
  parseError: (): Refusal => ({
    id: null,
    reason: 'parse',
    error: { code: -32700, message: 'Parse error: the message is not valid JSON' },
  }),
  notUtf8: (): Refusal => ({
    id: null,
    reason: 'parse',
    error: {
      code: -32700,
      message:
        'Parse error: the message is not valid UTF-8; send JSON-RPC as UTF-8 text (invalid bytes are not replaced, so nothing is sent altered)',
    },
  }),
  /** `head`: the first bytes of the message, where clients put the id before the params. */
  tooLarge: (head: string, bytes: number, limit: number, why?: string): Refusal => ({
    id: idInHead(head),
    reason: 'too_large',
    error: {
      code: -32600,
      message: `Invalid Request: a message of ${bytes} bytes is over the limit of ${limit} bytes${why ? ` (${why})` : ''}`,
    },
  }),
};

/** The id of a message cut short, when it comes before `"params"` (as every SDK writes it). */
function idInHead(head: string): RequestId | null {
  const params = head.indexOf('"params"');
  const m = /"id"\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")/.exec(params === -1 ? head : head.slice(0, params));
  if (!m) return null;
  try {
    const id = JSON.parse(m[1]!) as unknown;
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * One message's bytes as JSON: strict UTF-8 (a lenient decode would turn invalid bytes into
 * U+FFFD and send, say, an SMS other than the one written), a leading byte order mark
 * dropped (some writers start with one), then JSON.parse.
 */
export function parseMessage(bytes: Uint8Array): { value: unknown; refusal?: undefined } | { refusal: Refusal } {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { refusal: refusal.notUtf8() };
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return { refusal: refusal.parseError() };
  }
}

/** The message to hand to the SDK, or why it is refused. */
export function screenMessage(message: unknown): { message: unknown; refusal?: undefined } | { refusal: Refusal } {
  if (Array.isArray(message)) return { refusal: refusal.batch() };
  const { tooWide, protoKey } = survey(message);
  if (tooWide) return { refusal: refusal.tooWide(message) };
  const long = overlongIdentifier(message);
  if (long) return { refusal: long };
  if (isJSONRPCRequest(message)) return { message: message.method === 'tools/call' ? setArgumentsAside(message, protoKey) : message };
  if (isJSONRPCNotification(message) || isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) return { message };
  return { refusal: refusal.invalid(message) };
}

/** Bounds on what the SDK echoes: far above any name or URI this server lists (tool names are at most 64). */
const MAX_METHOD_CHARS = 128;
const MAX_NAME_CHARS = 256;
const MAX_URI_CHARS = 2_048;

/** Every answer repeats its request's id, whole. */
const MAX_ID_CHARS = 256;

function overlongIdentifier(message: unknown): Refusal | undefined {
  if (!isObject(message)) return undefined;
  const { method, params, id } = message;
  if (typeof id === 'string' && id.length > MAX_ID_CHARS) return refusal.longId(id.length);
  if (typeof method === 'string' && method.length > MAX_METHOD_CHARS) {
    return refusal.tooLong(message, 'method', method.length, MAX_METHOD_CHARS, '"tools/call"');
  }
  if (!isObject(params)) return undefined;
  const meta = isObject(params._meta) ? params._meta[CLIENT_INFO_KEY] : undefined;
  for (const [field, info] of [
    ['clientInfo.name', method === 'initialize' ? params.clientInfo : undefined],
    [`_meta["${CLIENT_INFO_KEY}"].name`, meta],
  ] as const) {
    const name = isObject(info) ? info.name : undefined;
    if (typeof name === 'string' && name.length > MAX_NAME_CHARS)
      return refusal.tooLong(message, field, name.length, MAX_NAME_CHARS, '"ops-agent"');
    // The name is recorded and logged: a lone surrogate would be stored mangled (as U+FFFD).
    const lone = typeof name === 'string' ? loneSurrogateAt(name) : -1;
    if (lone >= 0) return refusal.notWellFormed(message, field, lone);
  }
  if (typeof params.name === 'string' && params.name.length > MAX_NAME_CHARS) {
    return refusal.tooLong(message, 'params.name', params.name.length, MAX_NAME_CHARS, '"send_notification"');
  }
  if (typeof params.uri === 'string' && params.uri.length > MAX_URI_CHARS) {
    return refusal.tooLong(message, 'params.uri', params.uri.length, MAX_URI_CHARS, '"banners://active/all"');
  }
  return undefined;
}

/** `protoKey`: whether the message holds a `__proto__` key anywhere (survey). */
function setArgumentsAside<M extends { params?: Record<string, unknown> }>(request: M, protoKey: boolean): M {
  const params = request.params;
  if (!params) return request;
  const meta = isObject(params._meta) ? params._meta : undefined;
  const aside = 'arguments' in params && (!isObject(params.arguments) || (protoKey && holdsProtoKey(params.arguments)));
  if (!aside && !(meta && ARGUMENTS_KEY in meta)) return request;
  const { [ARGUMENTS_KEY]: _spoofed, ...restMeta } = meta ?? {};
  const { arguments: args, ...rest } = params;
  return {
    ...request,
    params: aside ? { ...rest, _meta: { ...restMeta, [ARGUMENTS_KEY]: args } } : { ...params, _meta: restMeta },
  };
}

/** Object members (keys) a message may hold in all, at every depth. */
export const MAX_OBJECT_MEMBERS = 10_000;

/**
 * Whether `visit` holds for some object in a parsed JSON value, walked without recursion
 * (nesting is the client's). `for…in` on a JSON object sees own keys only: JSON.parse makes
 * plain objects whose prototype has no enumerable keys.
 */
function someObject(value: unknown, visit: (object: Record<string, unknown>) => boolean): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    // One push at a time: spreading a wide list (400,000 items fit in a body) overflows the stack.
    if (Array.isArray(v)) for (const item of v) stack.push(item);
    else {
      const object = v as Record<string, unknown>;
      if (visit(object)) return true;
      for (const key in object) stack.push(object[key]);
    }
  }
  return false;
}

/**
 * One walk of a parsed message: whether its objects have more than MAX_OBJECT_MEMBERS
 * members in all, and whether any of them holds an own `__proto__` key.
 */
function survey(message: unknown): { tooWide: boolean; protoKey: boolean } {
  let members = 0;
  let protoKey = false;
  const tooWide = someObject(message, (object) => {
    protoKey ||= Object.hasOwn(object, '__proto__');
    for (const _ in object) if (++members > MAX_OBJECT_MEMBERS) return true;
    return false;
  });
  return { tooWide, protoKey };
}

/** Whether `__proto__` is an own key anywhere in a parsed JSON value. */
const holdsProtoKey = (value: unknown) => someObject(value, (object) => Object.hasOwn(object, '__proto__'));
