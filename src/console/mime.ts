/**
 * Just enough MIME reading to show a recorded message to a person: its headers, every part,
 * its HTML part, and its attachments. It reads the structure as mail clients do (RFC 2046: a
 * delimiter is a whole line), so what the console lists is what a recipient gets. Parts stay
 * transfer-encoded until one is asked for: a list of parts never decodes an attachment. The
 * message itself is never changed; the console offers it whole for download.
 */
import { createHash } from 'node:crypto';

export interface MimePart {
  headers: Map<string, string>;
  type: string;
  params: Map<string, string>;
  /** A leaf's body as written, transfer encoding and all ('' for a multipart). */
  encoded: string;
  parts: MimePart[];
}

/** One leaf part as a list shows it: nothing decoded but what is small (names, not bodies). */
export interface MimeLeaf {
  type: string;
  /** Its file name, decoded (RFC 2231, RFC 2047), when it has one. */
  filename?: string;
  attachment: boolean;
  /** Decoded size in bytes (for base64, worked out from the encoded length). */
  size: number;
  /** SHA-256 of the decoded bytes, when asked for (one message's page, never a list). */
  sha256?: string;
}

export interface MimeAttachment {
  filename: string;
  type: string;
  size: number;
  sha256: string;
}

/** A payload that carries a whole message as text under `raw` (how a mail payload is recorded). */
export function rawMessage(payload: unknown): string | undefined {
  const raw = (payload as { raw?: unknown } | null)?.raw;
  return typeof raw === 'string' && /^[!-9;-~]+:/m.test(raw) ? raw : undefined;
}

/** A header value with its RFC 2047 encoded words (`=?UTF-8?B?…?=`, `=?UTF-8?Q?…?=`) decoded; other charsets are left as written. */
export function decodeWords(value: string): string {
  return value.replace(/=\?utf-8\?([BQ])\?([^?]*)\?=(\s+(?==\?))?/gi, (_, enc: string, text: string) =>
    enc.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : decode(text.replace(/_/g, ' '), 'quoted-printable').toString('utf8'),
  );
}

/** Where the header section ends (a blank line, CRLF or LF), without a regex over the body: parts run to megabytes. */
function split(text: string): { head: string; body: string } {
  const crlf = text.indexOf('\r\n\r\n');
  const lf = text.indexOf('\n\n');
  const lfcr = text.indexOf('\n\r\n');
  const ends = [crlf < 0 ? -1 : crlf, lf, lfcr].filter((i) => i >= 0);
  if (ends.length === 0) return { head: text, body: '' };
  const at = Math.min(...ends);
  const sep = at === crlf ? 4 : at === lfcr ? 3 : 2;
  return { head: text.slice(0, at), body: text.slice(at + sep) };
}

/** How many times `c` occurs in `text` (native search: no per-character loop in JavaScript). */
function count(text: string, c: string): number {
  let n = 0;
  for (let i = text.indexOf(c); i >= 0; i = text.indexOf(c, i + 1)) n++;
  return n;
}

/** `text` without one line break at its end. */
const chomp = (text: string) => (text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text);

function parseHeaders(head: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    // The first of a repeated header, as the one a reader acts on.
    if (colon > 0 && !headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return headers;
}

/** The headers of a message alone, without reading its body (a list's subject line). */
export function messageHeaders(raw: string): Map<string, string> {
  return parseHeaders(split(raw).head);
}

/** `value; name=token; name="quoted; \"with\" escapes"`: the value lower-cased and each parameter, names lower-cased. */
function parseParams(header: string): { value: string; params: Map<string, string> } {
  const params = new Map<string, string>();
  const first = header.indexOf(';');
  const value = (first < 0 ? header : header.slice(0, first)).trim().toLowerCase();
  const re = /;\s*([^=;\s]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (let m = re.exec(header); m; m = re.exec(header)) {
    const name = m[1]!.toLowerCase();
    if (!params.has(name)) params.set(name, m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!.trim());
  }
  return { value, params };
}

/** Text with `<marker>XX` hex escapes (RFC 2231's `%`, quoted-printable's `=`), as bytes. */
function escapedBytes(text: string, marker: '%' | '='): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text.slice(i + 1, i + 3);
    if (text[i] === marker && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(text[i]!, 'utf8'));
  }
  return Buffer.from(bytes);
}

/**
 * A parameter as its sender meant it: RFC 2231's `name*` and `name*0*`, `name*1`… (charset'lang'
 * then %XX escapes; UTF-8 and ASCII read, others left escaped) before the plain `name`, whose
 * RFC 2047 encoded words are decoded as mail clients do.
 */
function paramValue(params: Map<string, string>, name: string): string | undefined {
  const extended = params.get(`${name}*`);
  const pieces: { text: string; encoded: boolean }[] = extended !== undefined ? [{ text: extended, encoded: true }] : [];
  for (let i = 0; extended === undefined; i++) {
    const encoded = params.get(`${name}*${i}*`);
    const plain = params.get(`${name}*${i}`);
    if (encoded === undefined && plain === undefined) break;
    pieces.push(encoded !== undefined ? { text: encoded, encoded: true } : { text: plain!, encoded: false });
  }
  if (pieces.length > 0) {
    let charset = 'utf-8';
    if (pieces[0]!.encoded) {
      const m = /^([^']*)'[^']*'/.exec(pieces[0]!.text);
      if (m) {
        charset = m[1]!.toLowerCase() || 'us-ascii';
        pieces[0] = { text: pieces[0]!.text.slice(m[0].length), encoded: true };
      }
    }
    const readable = charset === 'utf-8' || charset === 'us-ascii';
    return pieces.map((p) => (p.encoded && readable ? escapedBytes(p.text, '%').toString('utf8') : p.text)).join('');
  }
  const plain = params.get(name);
  return plain === undefined ? undefined : decodeWords(plain);
}

function decode(body: string, encoding: string | undefined): Buffer {
  switch ((encoding ?? '').toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64');
    case 'quoted-printable':
      return escapedBytes(body.replace(/=\r?\n/g, ''), '=');
    default:
      return Buffer.from(body, 'utf8');
  }
}

/**
 * The bodies between a multipart's delimiters. A delimiter is a line of its own, `--` and the
 * boundary, then only spaces or tabs (`--` more for the last): the same text mid-line, or
 * followed by anything else, is content, as mail clients read it.
 */
const DELIMITER_END = /(--)?[ \t]*(\r?\n|$)/y;

function bodies(body: string, boundary: string): string[] {
  const dash = `--${boundary}`;
  const out: string[] = [];
  let start: number | undefined;
  for (let at = body.indexOf(dash); at >= 0; at = body.indexOf(dash, at + 1)) {
    if (at > 0 && body[at - 1] !== '\n') continue;
    DELIMITER_END.lastIndex = at + dash.length;
    const rest = DELIMITER_END.exec(body);
    if (!rest) continue;
    if (start !== undefined) out.push(chomp(body.slice(start, at)));
    if (rest[1]) return out;
    start = at + dash.length + rest[0].length;
  }
  // No close delimiter: what follows the last delimiter is a part all the same (as readers take it).
  if (start !== undefined) out.push(body.slice(start));
  return out;
}

export function parseMime(text: string, depth = 0): MimePart {
  const { head, body } = split(text);
  const headers = parseHeaders(head);
  const { value: type, params } = parseParams(headers.get('content-type') ?? 'text/plain');
  const boundary = params.get('boundary');
  if (type.startsWith('multipart/') && boundary && depth < 8) {
    return { headers, type, params, encoded: '', parts: bodies(body, boundary).map((b) => parseMime(b, depth + 1)) };
  }
  return { headers, type, params, encoded: body, parts: [] };
}

function leaves(part: MimePart): MimePart[] {
  return part.parts.length === 0 ? [part] : part.parts.flatMap(leaves);
}

const disposition = (p: MimePart) => parseParams(p.headers.get('content-disposition') ?? '');
const isAttachment = (p: MimePart) => /^attachment/i.test(p.headers.get('content-disposition') ?? '') || filenameOf(p) !== undefined;
const filenameOf = (p: MimePart) => paramValue(disposition(p).params, 'filename') ?? paramValue(p.params, 'name');
const encodingOf = (p: MimePart) => p.headers.get('content-transfer-encoding');
const decoded = (p: MimePart) => decode(p.encoded, encodingOf(p));

/** A base64 body's decoded size from its length; any other body's by decoding it. */
function sizeOf(p: MimePart): number {
  if ((encodingOf(p) ?? '').toLowerCase() !== 'base64') return decoded(p).length;
  const e = p.encoded;
  const chars = e.length - count(e, '\r') - count(e, '\n') - count(e, ' ') - count(e, '\t');
  const pad = e.trimEnd().endsWith('==') ? 2 : e.trimEnd().endsWith('=') ? 1 : 0;
  return Math.floor((chars * 3) / 4) - pad;
}

/** Every leaf part of the message, in order: what a recipient's client is given; decoded and hashed only when `sha256` is asked for. */
export function partsOf(message: MimePart, { sha256 = false } = {}): MimeLeaf[] {
  return leaves(message).map((p) => {
    const filename = filenameOf(p);
    const leaf: MimeLeaf = { type: p.type, ...(filename !== undefined ? { filename } : {}), attachment: isAttachment(p), size: sizeOf(p) };
    if (sha256) {
      const bytes = decoded(p);
      leaf.size = bytes.length;
      leaf.sha256 = createHash('sha256').update(bytes).digest('hex');
    }
    return leaf;
  });
}

/** The message's first part of `type` that is not an attachment, decoded as text. */
function body(message: MimePart, type: string): string | undefined {
  const part = leaves(message).find((p) => p.type === type && !isAttachment(p));
  return part && decoded(part).toString('utf8');
}

/** The message's HTML body (the first text/html part that is not an attachment), as text. */
export const htmlBody = (message: MimePart) => body(message, 'text/html');

/** The message's plain-text body, as text. */
export const textBody = (message: MimePart) => body(message, 'text/plain');

/** Each attachment decoded and hashed: for one message's page, never for a list. */
export function attachments(message: MimePart): MimeAttachment[] {
  return partsOf(message, { sha256: true })
    .filter((p) => p.attachment)
    .map((p) => ({ filename: p.filename ?? '(unnamed)', type: p.type, size: p.size, sha256: p.sha256! }));
}
