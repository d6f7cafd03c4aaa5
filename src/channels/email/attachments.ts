/**
 * Email attachments: the bytes come in the call, base64, and nothing else does. The server
 * never reads a file or fetches a URL for one: what a person approved must be what leaves,
 * and a file or a URL can change after review. Each is checked against the operator's caps
 * (count, decoded size in all, types) and its bytes: a declared type the bytes contradict is
 * refused, and an undeclared one is sniffed.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { z } from 'zod';
import { ConfigError, list, positiveInt, type Env } from '../../core/env.js';

export const MAX_ATTACHMENTS = 10;
export const DEFAULT_MAX_ATTACHMENT_BYTES = 2 * 1024 * 1024;
export const DEFAULT_ATTACHMENT_TYPES = [
  'application/pdf',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'text/plain',
  'text/csv',
  'application/json',
  'text/calendar',
] as const;

export interface AttachmentSettings {
  /** Decoded bytes of all of a mail's attachments together. */
  maxAttachmentBytes: number;
  /** The content types an attachment may have, lower case. */
  attachmentTypes: readonly string[];
}

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

export function attachmentSettings(env: Env<'NOTIFY_EMAIL_MAX_ATTACHMENT_BYTES' | 'NOTIFY_EMAIL_ATTACHMENT_TYPES'>): AttachmentSettings {
  const maxAttachmentBytes = positiveInt(env, 'NOTIFY_EMAIL_MAX_ATTACHMENT_BYTES', DEFAULT_MAX_ATTACHMENT_BYTES);
  const raw = env.NOTIFY_EMAIL_ATTACHMENT_TYPES;
  const types = raw ? list(raw).map((t) => t.toLowerCase()) : [...DEFAULT_ATTACHMENT_TYPES];
  for (const t of types) {
    if (!MEDIA_TYPE.test(t))
      throw new ConfigError(
        `NOTIFY_EMAIL_ATTACHMENT_TYPES: ${JSON.stringify(t)} is not a media type; list types such as application/pdf,image/png`,
      );
  }
  return { maxAttachmentBytes, attachmentTypes: [...new Set(types)] };
}

/** What an attachment is, by its first bytes; undefined when they name no type known here. */
function magicType(bytes: Buffer): string | undefined {
  const starts = (sig: string) => bytes.subarray(0, sig.length).equals(Buffer.from(sig, 'latin1'));
  if (starts('%PDF-')) return 'application/pdf';
  if (starts('\x89PNG\r\n\x1a\n')) return 'image/png';
  if (starts('\xff\xd8\xff')) return 'image/jpeg';
  if (starts('GIF87a') || starts('GIF89a')) return 'image/gif';
  if (starts('RIFF') && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  if (starts('PK\x03\x04')) return 'application/zip';
  if (starts('\x7fELF') || starts('MZ')) return 'application/octet-stream';
  return undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The bytes as text, when they are UTF-8 without NUL (what a text type must be). */
function asText(bytes: Buffer): string | undefined {
  try {
    const text = utf8.decode(bytes);
    return text.includes('\u0000') ? undefined : text;
  } catch {
    return undefined;
  }
}

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};
const isCalendar = (text: string) => /^\uFEFF?BEGIN:VCALENDAR\r?\n/i.test(text);

/** The type the bytes are, for an attachment that declares none: magic first, then text, told apart by content and name. */
export function sniffType(bytes: Buffer, filename: string): string | undefined {
  const magic = magicType(bytes);
  if (magic) return magic;
  const text = asText(bytes);
  if (text === undefined) return undefined;
  if (isCalendar(text)) return 'text/calendar';
  const ext = filename.slice(filename.lastIndexOf('.') + 1).toLowerCase();
  if (ext === 'json' && isJson(text)) return 'application/json';
  if (ext === 'csv') return 'text/csv';
  return 'text/plain';
}

/** Why the bytes are not of `type`, or undefined when nothing in them says otherwise. */
export function contradiction(bytes: Buffer, type: string): string | undefined {
  const magic = magicType(bytes);
  const base = type.split(';')[0]!.trim();
  if (magic) return magic === base ? undefined : `the bytes are ${magic}`;
  const known = new Set<string>(['application/pdf', 'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/zip']);
  if (known.has(base)) return `the bytes do not start as ${base} does`;
  if (base.startsWith('text/') || base === 'application/json') {
    const text = asText(bytes);
    if (text === undefined) return 'the bytes are not UTF-8 text';
    if (base === 'application/json' && !isJson(text)) return 'the bytes are not JSON';
    if (base === 'text/calendar' && !isCalendar(text)) return 'the bytes do not start with BEGIN:VCALENDAR';
  }
  return undefined;
}

/** The extensions each default type's files go by: the name decides how the recipient's system opens a file, whatever its type says. */
const EXTENSIONS: Readonly<Record<string, readonly string[]>> = {
  'application/pdf': ['pdf'],
  'image/png': ['png'],
  'image/jpeg': ['jpg', 'jpeg', 'jpe', 'jfif'],
  'image/gif': ['gif'],
  'image/webp': ['webp'],
  'text/plain': ['txt', 'text', 'log'],
  'text/csv': ['csv'],
  'application/json': ['json'],
  'text/calendar': ['ics', 'ical', 'ifb'],
};

/** nodemailer's table, for a type an operator added: loaded on the first such name only. */
let detectMimeType: ((filename: string) => string) | undefined;

/**
 * The extension a recipient's system reads from `filename` (trailing dots and spaces dropped,
 * as Windows drops them), and whether it fits `type`; undefined when it does.
 */
export function nameMismatch(filename: string, type: string): { ext: string; expected: string } | undefined {
  const name = filename.replace(/[. ]+$/, '');
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
  const known = EXTENSIONS[type];
  if (known) return known.includes(ext) ? undefined : { ext, expected: known.map((e) => `.${e}`).join(', ') };
  detectMimeType ??= (createRequire(import.meta.url)('nodemailer/lib/mime-funcs') as { detectMimeType: (f: string) => string })
    .detectMimeType;
  return ext !== '' && detectMimeType(`x.${ext}`) === type ? undefined : { ext, expected: `an extension of ${type}` };
}

// A name that reads as another (bidi controls turn `txt.exe` around, a line or paragraph separator breaks it in two) or walks out of a folder.
const BAD_NAME = /[\p{Cc}/\\\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const WHITESPACE = /[\r\n\t ]/g;
/** What a path or a URL looks like, where bytes were expected. */
const NOT_BYTES = /^(?:[a-z][a-z0-9+.-]*:\/\/|file:|data:|~\/|\.{1,2}\/|\/[^/]+\/|[A-Za-z]:\\)/i;

export const NO_FILES =
  'content_base64 takes the bytes themselves, base64-encoded: this server never reads a file or fetches a URL for an attachment, since either could change after review. Read the file and send its base64.';

/** The decoded bytes of content_base64 (line breaks allowed), or undefined when it is not base64. */
export function decodeBase64(value: string): Buffer | undefined {
  const compact =
    value.includes('\n') || value.includes(' ') || value.includes('\r') || value.includes('\t') ? value.replace(WHITESPACE, '') : value;
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) return undefined;
  return Buffer.from(compact, 'base64');
}

/** One attachment as the call gives it. */
export interface AttachmentCall {
  filename: string;
  content_base64: string;
  content_type?: string | undefined;
}

/** One attachment as it leaves and as a person approving it reads it. */
export interface AttachmentFacts {
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
}

/** The type an attachment leaves with: the one declared, else the sniffed one (the schema refused a failed sniff). */
export function attachmentFacts(a: AttachmentCall): AttachmentFacts & { bytes: Buffer } {
  const bytes = decodeBase64(a.content_base64) ?? Buffer.alloc(0);
  const content_type = a.content_type ?? sniffType(bytes, a.filename) ?? 'application/octet-stream';
  return { filename: a.filename, content_type, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), bytes };
}

const issue = (ctx: z.RefinementCtx, message: string, path: (string | number)[], code = 'INVALID_FIELD') =>
  ctx.addIssue({ code: 'custom', message, path, params: { code } });

/** The allowed types in few words: the default list by kind, an operator's own as listed. */
export function typeWords(types: readonly string[]): string {
  const isDefault = types.length === DEFAULT_ATTACHMENT_TYPES.length && DEFAULT_ATTACHMENT_TYPES.every((t) => types.includes(t));
  return isDefault ? 'PDF, image, text, CSV, JSON, iCal' : types.join(', ');
}

export function sizeWords(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(bytes % (1024 * 1024) ? 1 : 0)} MiB`
    : bytes >= 1024
      ? `${Math.round(bytes / 1024)} KiB`
      : `${bytes} bytes`;
}

/** A name whose extension another type goes by is refused: the type list would mean nothing (`invoice.hta` as text/plain runs). */
function checkName(ctx: z.RefinementCtx, filename: string, type: string, i: number): void {
  const bad = nameMismatch(filename, type);
  if (!bad) return;
  const has = bad.ext ? `ends in .${bad.ext}` : 'has no extension';
  issue(
    ctx,
    `Rename attachments/${i}/filename: it ${has}, and the recipient's system opens a file by its name; a ${type} file must end in ${bad.expected}.`,
    [i, 'filename'],
  );
}

/** The `attachments` field under these settings: its JSON Schema states the caps, its refinement checks the bytes. */
export function attachmentsField({ maxAttachmentBytes, attachmentTypes }: AttachmentSettings) {
  const one = z.strictObject({
    // Bounds and types are the refinement's, not the schema's: each costs every call's context.
    filename: z.string(),
    content_base64: z.string().meta({ description: 'base64, not a path/URL' }),
    content_type: z.string().optional(),
  });
  return z
    .array(one)
    .min(1)
    .max(MAX_ATTACHMENTS)
    .superRefine((items, ctx) => {
      let total = 0;
      items.forEach((a, i) => {
        if (a.filename.length === 0 || a.filename.length > 255) {
          issue(
            ctx,
            `Fix attachments/${i}/filename: a file name of 1-255 characters.`,
            [i, 'filename'],
            a.filename.length ? 'TOO_LONG' : 'INVALID_FIELD',
          );
        } else if (BAD_NAME.test(a.filename) || a.filename === '.' || a.filename === '..') {
          issue(ctx, `Rename attachments/${i}/filename: a file name alone, without path separators, control or direction characters.`, [
            i,
            'filename',
          ]);
        }
        const bytes = decodeBase64(a.content_base64);
        if (bytes === undefined) {
          const advice = NOT_BYTES.test(a.content_base64)
            ? NO_FILES
            : 'Fix attachments/' + i + '/content_base64: it is not base64 (A-Z, a-z, 0-9, +, /, = padding).';
          return issue(ctx, advice, [i, 'content_base64']);
        }
        total += bytes.length;
        const declared = a.content_type?.toLowerCase();
        if (declared !== undefined) {
          if (!attachmentTypes.includes(declared)) {
            return issue(
              ctx,
              `Set attachments/${i}/content_type to one of ${attachmentTypes.join(', ')} (NOTIFY_EMAIL_ATTACHMENT_TYPES), or drop it to have it sniffed: ${JSON.stringify(a.content_type!.slice(0, 100))} is not allowed.`,
              [i, 'content_type'],
            );
          }
          const why = contradiction(bytes, declared);
          if (why)
            return issue(
              ctx,
              `Fix attachments/${i}: content_type says ${declared} but ${why}; send the right type, or drop content_type to have it sniffed.`,
              [i, 'content_type'],
            );
          return checkName(ctx, a.filename, declared, i);
        }
        const sniffed = sniffType(bytes, a.filename);
        if (sniffed === undefined || !attachmentTypes.includes(sniffed)) {
          const what = sniffed ? `the bytes are ${sniffed}` : 'the bytes are of no type this server recognises';
          return issue(
            ctx,
            `Fix attachments/${i}: ${what}, and attachments may be ${attachmentTypes.join(', ')} (NOTIFY_EMAIL_ATTACHMENT_TYPES).`,
            [i, 'content_base64'],
          );
        }
        checkName(ctx, a.filename, sniffed, i);
      });
      if (total > maxAttachmentBytes) {
        issue(
          ctx,
          `Shorten attachments: they decode to ${sizeWords(total)} in all, and this server takes at most ${sizeWords(maxAttachmentBytes)} (NOTIFY_EMAIL_MAX_ATTACHMENT_BYTES). Send a link the recipient can follow instead, or fewer files.`,
          [],
          'TOO_LONG',
        );
      }
    });
}

/** How many bytes the largest attachments take in a call: base64 is 4/3 of the bytes. */
export function attachmentWireBytes(maxAttachmentBytes: number): number {
  return Math.ceil(maxAttachmentBytes / 3) * 4;
}
