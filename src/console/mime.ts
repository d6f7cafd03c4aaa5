/**
 * Just enough MIME reading to show a recorded message to a person: its headers, its HTML
 * part, and its attachments (name, type, size, SHA-256). The message itself is never
 * changed; the console offers it whole for download.
 */
import { createHash } from 'node:crypto';

export interface MimePart {
  headers: Map<string, string>;
  type: string;
  params: Map<string, string>;
  /** Transfer-decoded bytes of a leaf part. */
  body: Buffer;
  parts: MimePart[];
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
    enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decode(text.replace(/_/g, ' '), 'quoted-printable').toString('utf8'),
  );
}

function split(text: string): { head: string; body: string } {
  const at = text.search(/\r?\n\r?\n/);
  if (at < 0) return { head: text, body: '' };
  const sep = /\r?\n\r?\n/.exec(text.slice(at))![0];
  return { head: text.slice(0, at), body: text.slice(at + sep.length) };
}

function parseParams(value: string): { value: string; params: Map<string, string> } {
  const [first, ...rest] = value.split(';');
  const params = new Map<string, string>();
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    params.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1'));
  }
  return { value: (first ?? '').trim().toLowerCase(), params };
}

function decode(body: string, encoding: string | undefined): Buffer {
  switch ((encoding ?? '').toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64');
    case 'quoted-printable': {
      const soft = body.replace(/=\r?\n/g, '');
      const bytes: number[] = [];
      for (let i = 0; i < soft.length; i++) {
        const hex = soft.slice(i + 1, i + 3);
        if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
          bytes.push(parseInt(hex, 16));
          i += 2;
        } else bytes.push(...Buffer.from(soft[i]!, 'utf8'));
      }
      return Buffer.from(bytes);
    }
    default:
      return Buffer.from(body, 'utf8');
  }
}

export function parseMime(text: string, depth = 0): MimePart {
  const { head, body } = split(text);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const { value: type, params } = parseParams(headers.get('content-type') ?? 'text/plain');
  const boundary = params.get('boundary');
  const parts: MimePart[] = [];
  if (type.startsWith('multipart/') && boundary && depth < 8) {
    const chunks = body.split(`--${boundary}`);
    for (const chunk of chunks.slice(1)) {
      if (chunk.startsWith('--')) break;
      parts.push(parseMime(chunk.replace(/^\r?\n/, '').replace(/\r?\n$/, ''), depth + 1));
    }
  }
  return { headers, type, params, body: parts.length > 0 ? Buffer.alloc(0) : decode(body, headers.get('content-transfer-encoding')), parts };
}

function leaves(part: MimePart): MimePart[] {
  return part.parts.length === 0 ? [part] : part.parts.flatMap(leaves);
}

const isAttachment = (p: MimePart) => /^attachment/i.test(p.headers.get('content-disposition') ?? '') || parseParams(p.headers.get('content-disposition') ?? '').params.has('filename');

/** The message's HTML body (the first text/html part that is not an attachment), as text. */
export function htmlBody(message: MimePart): string | undefined {
  const part = leaves(message).find((p) => p.type === 'text/html' && !isAttachment(p));
  return part?.body.toString('utf8');
}

export function attachments(message: MimePart): MimeAttachment[] {
  return leaves(message)
    .filter(isAttachment)
    .map((p) => ({
      filename: parseParams(p.headers.get('content-disposition') ?? '').params.get('filename') ?? p.params.get('name') ?? '(unnamed)',
      type: p.type,
      size: p.body.length,
      sha256: createHash('sha256').update(p.body).digest('hex'),
    }));
}
